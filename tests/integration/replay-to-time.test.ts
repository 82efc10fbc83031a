import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventStore } from '#events/store/event-store.ts';
import { auditLogProjection } from '#projections/audit-log/audit-log.projection.ts';
import { competitorListProjection } from '#projections/competitor-list/competitor-list.projection.ts';
import { rebuildProjections } from '#projections/rebuild/rebuild.ts';
import type { ProjectionRunner } from '#projections/runner.ts';
import { seedCompetitors } from '#services/seed/seed-competitors.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { writeSide } from '#tests/support/runtime-pieces.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';

/*
 * `replay --dry-run --to-time T` builds the state at T and counts the rows that differ from the live
 * tables. The live tables are brought up to date first, as for a dry run without a limit: otherwise the
 * count included every event the live runner had not projected yet (from the CLI, with no server
 * running, all of them), so a T after the newest event said rows differ where none do.
 */
describe.each(databaseBackends)('a dry run to a time, on %s', (backend) => {
  let db: TestDatabase;
  let store: EventStore;
  let runner: ProjectionRunner;
  const projections = [competitorListProjection, auditLogProjection];

  beforeAll(async () => {
    db = await createTestDatabase(backend);
    ({ store, runner } = await writeSide(db));
    await seedCompetitors(db.pool, store, { count: 20, seed: 5, batchSize: 20 });
    for (const p of projections) await runner.catchUp(p);
    // Written after the live tables last caught up, as when no server runs beside the command.
    await seedCompetitors(db.pool, store, { count: 7, seed: 6, batchSize: 7 });
  });
  afterAll(async () => db.drop());

  const dryRunTo = (toTime: Date) =>
    rebuildProjections(db, store, projections, {
      dryRun: true,
      toTime,
      catchUpLive: (live) => {
        const projection = projections.find((p) => p.name === live.name);
        return projection ? runner.catchUp(projection) : Promise.resolve(0);
      },
    });

  it('after the newest event: the state now, so no row differs', async () => {
    const summaries = await dryRunTo(new Date(Date.now() + 24 * 60 * 60 * 1000));
    expect(summaries.map((s) => [s.projection, s.differences])).toEqual(projections.map((p) => [p.name, 0]));
  });

  it('before the first event: nothing built, every live row differs', async () => {
    const summaries = await dryRunTo(new Date('2001-01-01T00:00:00Z'));
    const competitors = summaries.find((s) => s.projection === 'competitor-list');
    expect(competitors).toMatchObject({ events: 0, rows: 0 });
    // The live table is compared as it is now, all 27 competitors in it.
    const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM competitor_list');
    expect(rows[0]?.n).toBe(27);
    expect(competitors?.differences).toBeGreaterThanOrEqual(27);
  });
});
