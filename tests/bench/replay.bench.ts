/**
 * Rebuilding every projection (`replay --projection all`: one read of the log, shadow tables without
 * secondary indexes, indexes once, swap) against the plain floor measured in the same run over the
 * same log: one keyset pass in commit order with a batched upsert of every 1,000 events into one table.
 *
 *   npx tsx tests/bench/replay.bench.ts --competitors=100000,400000 --rounds=3
 *
 * Prints per size: events, both rates (median and spread of the rounds), the ratio (target ≥ 50%),
 * the peak RSS while rebuilding, and across sizes the time per event of the largest vs the smallest
 * (linear: within ±20%).
 */
import { eventRegistry } from '#events/all-events.ts';
import { createEventStore } from '#events/store/event-store.ts';
import type { Database } from '#infra/db/database.ts';
import { allProjections } from '#projections/all-projections.ts';
import { rebuildProjections } from '#projections/rebuild/rebuild.ts';
import { bootstrapContent } from '#services/bootstrap/bootstrap.ts';
import { createCommandRouter } from '#services/command-router.ts';
import { seedCompetitors } from '#services/seed/seed-competitors.ts';
import { knob, listKnob } from './support/knobs.ts';
import { fmt, medianSpread, report } from './support/stats.ts';
import { openScratchPostgres } from './support/services.ts';

const sizes = listKnob('competitors', [20_000, 80_000]);
const rounds = knob('rounds', 3);

/** The floor: read the whole log in commit order, 1,000 at a time, one upsert statement per batch. */
async function plainPass(db: Database): Promise<number> {
  await db.pool.query('DROP TABLE IF EXISTS bench_plain');
  await db.pool.query(
    'CREATE TABLE bench_plain (stream text PRIMARY KEY, version int NOT NULL, type text NOT NULL, data jsonb NOT NULL)',
  );
  let after = { xid: '0', position: 0 };
  let total = 0;
  for (;;) {
    const { rows } = await db.pool.query<{
      xid: string;
      position: number;
      stream: string;
      stream_version: number;
      type: string;
      data: unknown;
    }>(
      `SELECT transaction_id::text AS xid, position, stream, stream_version, type, data FROM events
       WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
       ORDER BY transaction_id, position LIMIT 1000`,
      [after.xid, after.position],
    );
    if (rows.length === 0) break;
    // Last write per stream wins within the batch (ON CONFLICT cannot touch a row twice).
    const latest = new Map(rows.map((r) => [r.stream, r]));
    await db.pool.query(
      `INSERT INTO bench_plain (stream, version, type, data)
       SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::jsonb[])
       ON CONFLICT (stream) DO UPDATE SET version = EXCLUDED.version, type = EXCLUDED.type, data = EXCLUDED.data`,
      [
        [...latest.keys()],
        [...latest.values()].map((r) => r.stream_version),
        [...latest.values()].map((r) => r.type),
        [...latest.values()].map((r) => JSON.stringify(r.data)),
      ],
    );
    total += rows.length;
    const last = rows.at(-1);
    if (!last) break;
    after = { xid: last.xid, position: last.position };
  }
  await db.pool.query('DROP TABLE bench_plain');
  return total;
}

/** Runs `work`, sampling RSS every 50 ms; returns seconds and the peak RSS in MB. */
async function measured<T>(work: () => Promise<T>): Promise<{ result: T; seconds: number; peakMb: number }> {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  const started = performance.now();
  try {
    const result = await work();
    return { result, seconds: (performance.now() - started) / 1000, peakMb: peak / 1024 / 1024 };
  } finally {
    clearInterval(timer);
  }
}

const perEvent: { size: number; microseconds: number }[] = [];

for (const size of sizes) {
  const db = await openScratchPostgres({ label: 'replay' });
  try {
    const store = createEventStore(db.pool, eventRegistry);
    await bootstrapContent(store, createCommandRouter(store), { demoData: false });
    process.stdout.write(`seeding ${fmt(size)} competitors\n`);
    await seedCompetitors(db.pool, store, { count: size, seed: 1 });
    await db.pool.query('ANALYZE');
    const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events');
    const events = rows[0]?.n ?? 0;
    // The live tables exist as the runner would leave them (a rebuild replaces them).
    await rebuildProjections(db, store, allProjections);

    const plainRates: number[] = [];
    const rebuildRates: number[] = [];
    const ratios: number[] = [];
    const peaks: number[] = [];
    const seconds: number[] = [];
    for (let round = 1; round <= rounds; round++) {
      const plain = await measured(() => plainPass(db));
      const rebuilt = await measured(() => rebuildProjections(db, store, allProjections));
      const plainRate = plain.result / plain.seconds;
      const rebuildRate = events / rebuilt.seconds;
      plainRates.push(plainRate);
      rebuildRates.push(rebuildRate);
      ratios.push(rebuildRate / plainRate);
      peaks.push(rebuilt.peakMb);
      seconds.push(rebuilt.seconds);
      process.stdout.write(
        `  round ${round}: plain ${fmt(plainRate, 0)} ev/s (${fmt(plain.seconds)} s), rebuild all ${fmt(rebuildRate, 0)} ev/s (${fmt(rebuilt.seconds)} s), peak RSS ${fmt(rebuilt.peakMb, 0)} MB\n`,
      );
    }
    const plain = medianSpread(plainRates);
    const rebuild = medianSpread(rebuildRates);
    const ratio = medianSpread(ratios);
    const peak = medianSpread(peaks);
    const time = medianSpread(seconds);
    perEvent.push({ size, microseconds: (time.median / events) * 1e6 });
    report(`replay-all-${size}`, {
      events,
      rebuild_ev_s: `${fmt(rebuild.median, 0)}(${fmt(rebuild.min, 0)}-${fmt(rebuild.max, 0)})`,
      plain_ev_s: `${fmt(plain.median, 0)}(${fmt(plain.min, 0)}-${fmt(plain.max, 0)})`,
      ratio_pct: `${fmt(ratio.median * 100)}(${fmt(ratio.min * 100)}-${fmt(ratio.max * 100)})`,
      rebuild_s: `${fmt(time.median)}(${fmt(time.min)}-${fmt(time.max)})`,
      peak_rss_mb: `${fmt(peak.median, 0)}(${fmt(peak.min, 0)}-${fmt(peak.max, 0)})`,
      rounds,
    });
  } finally {
    await db.drop();
  }
}

const smallest = perEvent[0];
const largest = perEvent.at(-1);
if (smallest && largest && largest !== smallest) {
  report('replay-all-linearity', {
    sizes: `${smallest.size}->${largest.size}`,
    us_per_event: `${fmt(smallest.microseconds, 2)}->${fmt(largest.microseconds, 2)}`,
    ratio: fmt(largest.microseconds / smallest.microseconds, 2),
  });
}
