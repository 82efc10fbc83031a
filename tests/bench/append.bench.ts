/**
 * EventStore.append throughput against plain single-row INSERT commits, at the same concurrency over
 * the same pool: each writer appends one event per call to a stream of its own with the expected
 * version increasing (the common case: no conflicts); the baseline is one autocommit
 * `INSERT INTO bench_plain (...) VALUES (...)` per call with the same payload. Real Postgres, and the
 * embedded PGlite (file-backed, one connection) for reference. Target: ≥ 50% at 8 writers (Postgres).
 *
 *   npx tsx tests/bench/append.bench.ts [--rounds=3] [--duration=2] [--writers=1,8] [--pool=8]
 *     [--backends=postgres,embedded] [--subjects=event-store,event-store-ungrouped,plain-insert]
 *     [--group-in-flight=4]
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { eventRegistry } from '#events/all-events.ts';
import type { EventMetadata } from '#events/envelope.ts';
import { createEventStore, type EventStore } from '#events/store/event-store.ts';
import type { Database } from '#infra/db/database.ts';
import { migrate } from '#infra/db/migrate.ts';
import { openEmbeddedDatabase } from '#infra/db/open-embedded.ts';
import { caseKnob, knob, listKnob } from './support/knobs.ts';
import { openScratchPostgres } from './support/services.ts';
import { reportMachine } from './support/machine.ts';
import { medianSpread, report } from './support/stats.ts';
import { benchNoteText, createPlainTable } from './support/plain-inserts.ts';

const rounds = knob('rounds', 3);
const seconds = knob('duration', 2);
const writerCounts = listKnob('writers', [1, 8]);
const poolSize = knob('pool', 8);
/** Group statements in flight at once for the grouping store (0: the store default, 4). */
const groupInFlight = knob('group-in-flight', 0);
const backends = caseKnob('backends', ['postgres', 'embedded'] as const);
// (An earlier `event-store-no-notify` variant showed what a NOTIFY inside every append cost; the
// trigger is gone since migration 005 — writers notify after their commits.)
// `event-store` groups concurrent appends into shared statements (group commit, decision 0014);
// `event-store-ungrouped` writes each append in a statement of its own, as before it.
const allSubjects = ['event-store', 'event-store-ungrouped', 'plain-insert'] as const;
const chosenSubjects = caseKnob('subjects', allSubjects);
type Subject = (typeof allSubjects)[number];

const metadata: EventMetadata = {
  actor: { id: 'bench', name: 'Bench' },
  commandId: 'set per append',
  correlationId: 'bench',
  at: new Date().toISOString(),
};
const noteText = benchNoteText;
const competitorId = randomUUID();
const eventData = (noteVersion: number) => ({
  competitorId,
  column: 'general',
  value: noteText,
  noteVersion,
});

async function openBackend(
  backend: (typeof backends)[number],
): Promise<{ db: Database; drop(): Promise<void> }> {
  if (backend === 'postgres') {
    const db = await openScratchPostgres({ poolSize, label: 'bench_append' });
    return { db, drop: () => db.drop() };
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rivals-bench-append-'));
  const db = await openEmbeddedDatabase(dir);
  await migrate(db.pool);
  return {
    db,
    async drop() {
      await db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

let runNumber = 0;

interface Stores {
  grouped: EventStore;
  ungrouped: EventStore;
}

/** `writers` loops for `duration` seconds, each on a stream (or key) of its own; returns calls per second. */
async function run(db: Database, stores: Stores, subject: Subject, writers: number, duration: number) {
  const store = subject === 'event-store-ungrouped' ? stores.ungrouped : stores.grouped;
  const run = ++runNumber;
  const stopAt = performance.now() + duration * 1000;
  const started = performance.now();
  let calls = 0;
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      const stream = `competitor-bench-${run}-${w}`;
      for (let version = 0; performance.now() < stopAt; version++) {
        if (subject !== 'plain-insert') {
          const commandId = randomUUID();
          const result = await store.append(
            stream,
            [{ type: 'CompetitorNoteUpdated', data: eventData(version + 1) }],
            version,
            commandId,
            { ...metadata, commandId },
          );
          if (result.kind !== 'appended') throw new Error(`append answered ${result.kind}`);
        } else {
          await db.pool.query(
            'INSERT INTO bench_plain (stream, type, data, metadata) VALUES ($1, $2, $3, $4)',
            [
              stream,
              'CompetitorNoteUpdated',
              JSON.stringify(eventData(version + 1)),
              JSON.stringify(metadata),
            ],
          );
        }
        calls++;
      }
    }),
  );
  const rate = calls / ((performance.now() - started) / 1000);
  return rate;
}

for (const backend of backends) {
  const opened = await openBackend(backend);
  const { db } = opened;
  try {
    await createPlainTable(db.pool);
    const stores: Stores = {
      grouped: createEventStore(db.pool, eventRegistry, {
        groupCommit: groupInFlight > 0 ? { maxInFlight: groupInFlight } : {},
      }),
      ungrouped: createEventStore(db.pool, eventRegistry, { groupCommit: false }),
    };
    const subjects = chosenSubjects;
    for (const writers of writerCounts) {
      for (const subject of subjects) await run(db, stores, subject, writers, 0.5); // warm-up
      const rates = new Map<Subject, number[]>(subjects.map((s) => [s, []]));
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? subjects : [...subjects].reverse();
        for (const subject of order) {
          const rate = await run(db, stores, subject, writers, seconds);
          rates.get(subject)?.push(rate);
          process.stdout.write(
            `  ${backend} writers=${writers} round ${round + 1}/${rounds} ${subject}: ${rate.toFixed(0)}/s\n`,
          );
        }
      }
      for (const [subject, list] of rates) {
        const spread = medianSpread(list);
        report(`append.${backend}.writers-${writers}.${subject}`, {
          rounds: list.length,
          pool: db.kind === 'postgres' ? poolSize : 1,
          ops_per_s: Math.round(spread.median),
          min: Math.round(spread.min),
          max: Math.round(spread.max),
        });
      }
      const plain = rates.get('plain-insert') ?? [];
      for (const subject of subjects.filter((s) => s !== 'plain-insert')) {
        const ours = rates.get(subject) ?? [];
        if (plain.length === 0 || ours.length === 0) continue;
        const ratio = medianSpread(ours.map((r, i) => (100 * r) / (plain[i] ?? Number.NaN)));
        const judged = subject === 'event-store' && writers === 8 && backend === 'postgres';
        report(`append.${backend}.writers-${writers}.ratio.${subject}-vs-plain`, {
          pct: ratio.median,
          pct_min: ratio.min,
          pct_max: ratio.max,
          ...(judged ? { target_pct: 50, met: ratio.median >= 50 ? 'yes' : 'no' } : {}),
        });
      }
    }
  } finally {
    await opened.drop();
  }
}
reportMachine('append');
