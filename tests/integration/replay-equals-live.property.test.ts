import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Command } from '#events/command.ts';
import { noteColumns, threats } from '#events/competitor/fields.ts';
import type { EventStore } from '#events/store/event-store.ts';
import { competitorListProjection } from '#projections/competitor-list/competitor-list.projection.ts';
import { rebuildProjections } from '#projections/rebuild/rebuild.ts';
import { ProjectionRunner } from '#projections/runner.ts';
import type { CommandRouter } from '#services/command-router.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { envelope, silentLog, writeSide } from '#tests/support/runtime-pieces.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';

const segments = ['enterprise', 'mid-market', 'smb', 'emerging'];
const slots = 4;

/** A step against one of a few competitor slots; ids are assigned per run. */
const step = fc.oneof(
  fc.record({
    kind: fc.constant('add' as const),
    slot: fc.nat(slots - 1),
    name: fc.constantFrom('Acme', 'Beta', 'Gamma', 'Delta', 'Acme'),
  }),
  fc.record({
    kind: fc.constant('update' as const),
    slot: fc.nat(slots - 1),
    name: fc.constantFrom('Acme', 'Beta', 'Zeta', 'Omega'),
    threat: fc.constantFrom(...threats),
    segmentId: fc.constantFrom(...segments),
  }),
  fc.record({
    kind: fc.constant('note' as const),
    slot: fc.nat(slots - 1),
    column: fc.constantFrom(...noteColumns),
    value: fc.string({ minLength: 1, maxLength: 30 }),
  }),
  fc.record({ kind: fc.constant('delete' as const), slot: fc.nat(slots - 1) }),
);

type StepValue = typeof step extends fc.Arbitrary<infer T> ? T : never;

function toCommand(s: StepValue, ids: string[], run: number): Command {
  const competitorId = ids[s.slot] as string;
  switch (s.kind) {
    case 'add':
      return {
        type: 'AddCompetitor',
        payload: {
          competitorId,
          name: `${s.name} ${run}`,
          website: null,
          segmentId: 'smb',
          threat: 'low',
          headquarters: null,
        },
      };
    case 'update':
      return {
        type: 'UpdateCompetitor',
        payload: {
          competitorId,
          name: `${s.name} ${run}`,
          website: 'https://x.example',
          segmentId: s.segmentId,
          threat: s.threat,
          headquarters: 'HQ',
        },
      };
    case 'note':
      return {
        type: 'UpdateCompetitorNote',
        payload: { competitorId, column: s.column, value: s.value.trim() ? s.value : 'x' },
      };
    case 'delete':
      return { type: 'DeleteCompetitor', payload: { competitorId } };
  }
}

describe.each(databaseBackends)('replay equals live on %s', (backend) => {
  let db: TestDatabase;
  let store: EventStore;
  let route: CommandRouter;

  beforeAll(async () => {
    db = await createTestDatabase(backend);
    ({ store, route } = await writeSide(db));
  });
  afterAll(async () => db.drop());

  it('rebuilding from position 0 gives the same rows as live, for random command sequences (200 runs)', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 12 }),
        fc.constantFrom(1, 3, 50, 500),
        fc.constantFrom(7, 100, 1_000),
        async (steps, liveBatch, replayBatch) => {
          run++;
          const ids = Array.from({ length: slots }, () => randomUUID());
          for (const s of steps) await route(envelope(toCommand(s, ids, run)));
          // Live: caught up incrementally, in small or large batches.
          const live = new ProjectionRunner({
            db,
            store,
            projections: [competitorListProjection],
            log: silentLog,
            batchSize: liveBatch,
          });
          await live.catchUp(competitorListProjection);
          // Replay: everything from position 0 into shadow tables.
          const [rebuilt] = await rebuildProjections(db, store, [competitorListProjection], {
            batchSize: replayBatch,
            dryRun: true,
          });
          expect(rebuilt?.differences).toBe(0);
          const { rows } = await db.pool.query<{ rank: number }>(
            'SELECT rank FROM competitor_list ORDER BY rank',
          );
          expect(rows.map((r) => r.rank)).toEqual(rows.map((_, i) => i + 1));
        },
      ),
      { numRuns: 200 },
    );
    expect(run).toBeGreaterThanOrEqual(200);
    // Each run builds, indexes, compares and drops shadow tables: more than the default minute.
  }, 600_000);
});
