/**
 * End to end on Postgres + Redis, through the real runtime (`startRuntime`: gateway → Redis stream →
 * command worker → event store → projection runner → watcher):
 *
 *  (a) sustained: `clients` concurrent clients, each dispatching UpdateCompetitorNote for a competitor
 *      of its own and waiting until the competitor list has projected it (read-your-writes), for
 *      `duration` seconds. Baseline in the same run: batched 100-row `INSERT ... SELECT FROM unnest(...)`
 *      into a plain table (rows/s). Target ≥ 25% of the baseline.
 *  (b) latency at 10% of the sustained rate, open loop (sends on a fixed schedule, not after answers):
 *      command sent → projected, p50/p99, against one plain single-row INSERT commit sent on the same
 *      schedule at the same time (separate connections). Target p99 ≤ 5× the INSERT's p99.
 *
 *   npx tsx tests/bench/end-to-end.bench.ts [--rounds=3] [--duration=5] [--clients=50] [--competitors=50]
 *     [--baseline-duration=2] [--baseline-writers=1] [--latency-duration=10] [--load-pct=10]
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import type { Command } from '#events/command.ts';
import type { Actor, Checkpoint } from '#events/envelope.ts';
import { loadConfig } from '#infra/config.ts';
import { createRedisClient } from '#infra/redis.ts';
import { bootstrapContent } from '#services/bootstrap/bootstrap.ts';
import { startRuntime, type Runtime } from '#web/runtime.server.ts';
import { addCompetitorCommand } from '#tests/support/runtime-pieces.ts';
import { knob } from './support/knobs.ts';
import { createScratchDatabase, redisUrl, silentLog, sleep, uniqueSuffix } from './support/services.ts';
import { reportMachine } from './support/machine.ts';
import { medianSpread, report, summarize } from './support/stats.ts';
import { batchedInserts, benchNoteText, createPlainTable } from './support/plain-inserts.ts';

const rounds = knob('rounds', 3);
const seconds = knob('duration', 5);
const clients = knob('clients', 50);
const competitorCount = knob('competitors', 50);
const baselineSeconds = knob('baseline-duration', 2);
const baselineWriters = knob('baseline-writers', 1);
const latencySeconds = knob('latency-duration', 10);
const loadPct = knob('load-pct', 10);
const WAIT_MS = 15_000;

const actor: Actor = { id: 'bench', name: 'Bench' };
const noteText = benchNoteText;
const prefix = `bench:e2e:${uniqueSuffix()}:`;

const targetOf = (outcome: { transactionId: string; positions: number[] }): Checkpoint => ({
  transactionId: outcome.transactionId,
  position: Math.max(...outcome.positions),
});

/** Timings of one command: sent → accepted (the worker's answer), and sent → projected. */
interface Timing {
  acceptedMs: number;
  projectedMs: number;
}

/** Dispatches one command and waits until the competitor list shows it; undefined if it failed. */
async function sendAndProject(runtime: Runtime, command: Command): Promise<Timing | undefined> {
  const started = performance.now();
  const { outcome } = await runtime.gateway.dispatch(command, actor, { timeoutMs: WAIT_MS });
  if (outcome?.status !== 'accepted') return undefined;
  const acceptedMs = performance.now() - started;
  if (outcome.positions.length === 0) return { acceptedMs, projectedMs: acceptedMs };
  const projected = await runtime.watcher.waitFor(['competitor-list'], targetOf(outcome), WAIT_MS);
  return projected ? { acceptedMs, projectedMs: performance.now() - started } : undefined;
}

let noteCounter = 0;
const noteCommand = (competitorId: string): Command => ({
  type: 'UpdateCompetitorNote',
  payload: { competitorId, column: 'general', value: `${noteText}#${++noteCounter}` },
});

/** (a) closed loop: every client sends its next command once the last one is projected. */
async function sustained(runtime: Runtime, ids: readonly string[]) {
  const stopAt = performance.now() + seconds * 1000;
  const started = performance.now();
  let done = 0;
  let failed = 0;
  const timings: Timing[] = [];
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      const competitorId = ids[c % ids.length] ?? '';
      while (performance.now() < stopAt) {
        const timing = await sendAndProject(runtime, noteCommand(competitorId));
        if (timing === undefined) failed++;
        else {
          done++;
          timings.push(timing);
        }
      }
    }),
  );
  return {
    rate: done / ((performance.now() - started) / 1000),
    done,
    failed,
    latency: summarize(timings.map((t) => t.projectedMs)),
    accepted: summarize(timings.map((t) => t.acceptedMs)),
  };
}

/**
 * Open loop at `rate` per second for `latencySeconds`: each tick sends one command (sent → projected)
 * and one plain single-row INSERT on its own connection, so both see the same machine at the same time.
 */
async function openLoop(runtime: Runtime, pool: pg.Pool, ids: readonly string[], rate: number) {
  const commandMs: number[] = [];
  const acceptedMs: number[] = [];
  const insertMs: number[] = [];
  let failed = 0;
  const inFlight: Promise<void>[] = [];
  const started = performance.now();
  const total = Math.max(1, Math.round(rate * latencySeconds));
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const competitorId = ids[i % ids.length] ?? '';
    inFlight.push(
      sendAndProject(runtime, noteCommand(competitorId)).then((timing) => {
        if (timing === undefined) failed++;
        else {
          commandMs.push(timing.projectedMs);
          acceptedMs.push(timing.acceptedMs);
        }
      }),
      (async () => {
        const t = performance.now();
        await pool.query('INSERT INTO bench_plain (stream, type, data, metadata) VALUES ($1, $2, $3, $4)', [
          `competitor-bench-${i}`,
          'CompetitorNoteUpdated',
          JSON.stringify({ competitorId, column: 'general', value: noteText, noteVersion: i + 1 }),
          JSON.stringify({ actor, commandId: randomUUID(), correlationId: 'bench' }),
        ]);
        insertMs.push(performance.now() - t);
      })(),
    );
  }
  // The send rate actually kept (a busy event loop can fall behind the schedule).
  const achieved = total / ((performance.now() - started) / 1000 + 1 / rate);
  await Promise.all(inFlight);
  return { command: commandMs, accepted: acceptedMs, insert: insertMs, failed, achieved };
}

const scratch = await createScratchDatabase('bench_e2e');
const config = loadConfig({
  DATABASE_URL: scratch.url,
  REDIS_URL: redisUrl,
  REDIS_PREFIX: prefix,
  SESSION_SECRET: 'b'.repeat(40),
  LOG_LEVEL: 'silent',
});
let runtime: Runtime | undefined;
// The baselines' own connections (the runtime keeps its pool of 10 to itself).
const pool = new pg.Pool({ connectionString: scratch.url, max: Math.max(2, baselineWriters) });
// pg-pool's end() resolves once it has asked its idle clients to end, not once they have: the scratch
// database's DROP … WITH (FORCE) right after can still reach one and end it "due to administrator
// command", an 'error' on the pool that, unheard, ended the bench after every figure was printed (CI).
pool.on('error', () => undefined);

/**
 * WAL the server has written so far, in bytes. The difference around a run is how much that run wrote
 * (rows, index entries, full-page images): a command's write volume against a baseline row's is the
 * write amplification of the read models every command keeps up to date.
 */
const walBytes = async (): Promise<number> => {
  const { rows } = await pool.query<{ bytes: string }>(
    `SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::text AS bytes`,
  );
  return Number(rows[0]?.bytes);
};
const plainRows = async (): Promise<number> =>
  (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM bench_plain')).rows[0]?.n ?? 0;

/** The batched-insert baseline, with the WAL it wrote per row. */
async function baselineRun(): Promise<{ rate: number; walPerRow: number }> {
  const [wal, rows] = [await walBytes(), await plainRows()];
  const rate = await batchedInserts(pool, { seconds: baselineSeconds, writers: baselineWriters });
  const written = (await plainRows()) - rows;
  return { rate, walPerRow: ((await walBytes()) - wal) / Math.max(1, written) };
}
try {
  runtime = await startRuntime(config, silentLog, { purpose: 'bench' });
  await bootstrapContent(runtime.store, runtime.route, { demoData: false });
  await createPlainTable(pool);
  const ids: string[] = [];
  for (let i = 1; i <= competitorCount; i++) {
    const command = addCompetitorCommand(`Bench Rival ${String(i).padStart(3, '0')}`);
    if ((await sendAndProject(runtime, command)) === undefined) throw new Error('could not add a competitor');
    ids.push(command.payload.competitorId);
  }
  process.stdout.write(`runtime up, ${ids.length} competitors; warming up\n`);
  const warm = runtime;
  await Promise.all(ids.slice(0, clients).map((id) => sendAndProject(warm, noteCommand(id))));
  await batchedInserts(pool, { seconds: baselineSeconds, writers: baselineWriters });

  const rates: number[] = [];
  const baselines: number[] = [];
  const walPerCommand: number[] = [];
  const walPerRow: number[] = [];
  const closedP50: number[] = [];
  const closedP99: number[] = [];
  const acceptedP50: number[] = [];
  let sustainedFailures = 0;
  for (let round = 0; round < rounds; round++) {
    const first = round % 2 === 0;
    const baselineRound = async () => {
      const base = await baselineRun();
      baselines.push(base.rate);
      walPerRow.push(base.walPerRow);
    };
    if (!first) await baselineRound();
    const walBefore = await walBytes();
    const result = await sustained(runtime, ids);
    walPerCommand.push(((await walBytes()) - walBefore) / Math.max(1, result.done));
    if (first) await baselineRound();
    rates.push(result.rate);
    closedP50.push(result.latency.p50);
    closedP99.push(result.latency.p99);
    acceptedP50.push(result.accepted.p50);
    sustainedFailures += result.failed;
    process.stdout.write(
      `  round ${round + 1}/${rounds}: ${result.rate.toFixed(0)} commands/s projected ` +
        `(p50 ${result.latency.p50.toFixed(1)} ms, p99 ${result.latency.p99.toFixed(1)} ms, ` +
        `accepted p50 ${result.accepted.p50.toFixed(1)} ms, ${result.failed} failed); ` +
        `baseline ${baselines.at(-1)?.toFixed(0)} rows/s\n`,
    );
  }
  const rate = medianSpread(rates);
  const baseline = medianSpread(baselines);
  const ratio = medianSpread(rates.map((r, i) => (100 * r) / (baselines[i] ?? Number.NaN)));
  report('end-to-end.sustained', {
    rounds,
    clients,
    competitors: competitorCount,
    commands_per_s: Math.round(rate.median),
    min: Math.round(rate.min),
    max: Math.round(rate.max),
    p50_ms: medianSpread(closedP50).median,
    p99_ms: medianSpread(closedP99).median,
    accepted_p50_ms: medianSpread(acceptedP50).median,
    failed: sustainedFailures,
    wal_bytes_per_command: Math.round(medianSpread(walPerCommand).median),
  });
  report('end-to-end.baseline.batched-unnest-insert', {
    writers: baselineWriters,
    rows_per_batch: 100,
    rows_per_s: Math.round(baseline.median),
    min: Math.round(baseline.min),
    max: Math.round(baseline.max),
    wal_bytes_per_row: Math.round(medianSpread(walPerRow).median),
  });
  // How many baseline rows' worth of writing one command does (its events, outcome, inbox row and every
  // read model with its indexes): at equal write throughput, the sustained rate cannot pass the baseline
  // divided by this.
  const amplification = medianSpread(walPerCommand.map((w, i) => w / (walPerRow[i] ?? Number.NaN)));
  report('end-to-end.write-amplification', {
    wal_per_command_vs_baseline_row: amplification.median,
    min: amplification.min,
    max: amplification.max,
  });
  report('end-to-end.ratio.sustained-vs-batched-insert', {
    pct: ratio.median,
    pct_min: ratio.min,
    pct_max: ratio.max,
    target_pct: 25,
    met: ratio.median >= 25 ? 'yes' : 'no',
  });

  // (b) latency at a fraction of the sustained rate.
  const pace = Math.max(1, (rate.median * loadPct) / 100);
  const commandAll: number[] = [];
  const acceptedAll: number[] = [];
  const insertAll: number[] = [];
  const roundP99 = { command: [] as number[], insert: [] as number[] };
  let latencyFailures = 0;
  for (let round = 0; round < rounds; round++) {
    const result = await openLoop(runtime, pool, ids, pace);
    commandAll.push(...result.command);
    acceptedAll.push(...result.accepted);
    insertAll.push(...result.insert);
    roundP99.command.push(summarize(result.command).p99);
    roundP99.insert.push(summarize(result.insert).p99);
    latencyFailures += result.failed;
    process.stdout.write(
      `  latency round ${round + 1}/${rounds} at ${pace.toFixed(1)}/s (achieved ${result.achieved.toFixed(1)}/s): ` +
        `command p50 ${summarize(result.command).p50.toFixed(1)} p99 ${summarize(result.command).p99.toFixed(1)} ms; ` +
        `INSERT p50 ${summarize(result.insert).p50.toFixed(1)} p99 ${summarize(result.insert).p99.toFixed(1)} ms\n`,
    );
  }
  const command = summarize(commandAll);
  const insert = summarize(insertAll);
  const commandP99 = medianSpread(roundP99.command);
  const insertP99 = medianSpread(roundP99.insert);
  report('end-to-end.latency.command-to-projected', {
    rate_per_s: pace,
    load_pct: loadPct,
    n: command.n,
    p50_ms: command.p50,
    p99_ms: command.p99,
    accepted_p50_ms: summarize(acceptedAll).p50,
    accepted_p99_ms: summarize(acceptedAll).p99,
    round_p99_min: commandP99.min,
    round_p99_max: commandP99.max,
    failed: latencyFailures,
  });
  report('end-to-end.latency.plain-insert-commit', {
    n: insert.n,
    p50_ms: insert.p50,
    p99_ms: insert.p99,
    round_p99_min: insertP99.min,
    round_p99_max: insertP99.max,
  });
  // Judged per round (both p99s from the same minutes), then the median over rounds; pooled for reference.
  const times = medianSpread(roundP99.command.map((c, i) => c / (roundP99.insert[i] ?? Number.NaN)));
  report('end-to-end.latency.ratio.p99-command-vs-insert', {
    times: times.median,
    round_min: times.min,
    round_max: times.max,
    pooled_times: command.p99 / insert.p99,
    target_max: 5,
    met: times.median <= 5 ? 'yes' : 'no',
  });
  reportMachine('end-to-end');
} finally {
  await runtime?.close();
  await pool.end();
  await scratch.drop();
  const redis = createRedisClient(redisUrl, silentLog, { name: 'bench-cleanup' });
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
}
