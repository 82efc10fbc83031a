import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventStore } from '#events/store/event-store.ts';
import { allProjections } from '#projections/all-projections.ts';
import type { ProjectionRunner } from '#projections/runner.ts';
import { seedCompetitors } from '#services/seed/seed-competitors.ts';
import { runs } from '#tests/support/environment.ts';
import { writeSide } from '#tests/support/runtime-pieces.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';

/**
 * An operator's `replay` (and `seed`, `users:add`) first brings the live projections up to date. A
 * transaction left open that may write the log holds every reader of the log back (commit-safe order,
 * decisions 0002, 0028), so after a minute the command failed with "made no progress … (another process
 * holds it, or a transaction stays open)": which transaction, in which database, the operator had to dig
 * out of pg_stat_activity on a cluster they may share. The message now names it. A transaction left open
 * that does not write the log (a psql session, a report, an index build) no longer holds anything back.
 * Postgres only: the embedded database runs one transaction at a time, in the process.
 */
describe.each(runs('postgres') ? ['postgres'] : [])('a catch-up held back on %s', (backend) => {
  let db: TestDatabase;
  let store: EventStore;
  let runner: ProjectionRunner;
  let open: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase(backend as 'postgres');
    ({ store, runner } = await writeSide(db));
    open = new pg.Client({ connectionString: db.url, application_name: 'forgotten psql' });
    await open.connect();
  });
  afterAll(async () => {
    await open?.end().catch(() => undefined);
    await db?.drop();
  });

  it('a transaction left open that does not write the log holds no catch-up back', async () => {
    await open.query('BEGIN');
    await open.query('SELECT pg_current_xact_id()');
    try {
      await seedCompetitors(db.pool, store, { count: 3, seed: 2, batchSize: 3 });
      const projection = allProjections.find((p) => p.name === 'competitor-list');
      if (!projection) throw new Error('no competitor-list projection');
      expect(await runner.catchUp(projection, 5_000)).toBeGreaterThan(0);
    } finally {
      await open.query('ROLLBACK');
    }
  });

  it('names the open transaction that holds the log back: its pid, database and application', async () => {
    await open.query('BEGIN');
    // A writer of the log stopped midway: it holds the log's append lock and a transaction id.
    const { rows } = await open.query<{ pid: number }>(
      'SELECT pg_backend_pid() AS pid, log_append_lock(), pg_current_xact_id()',
    );
    // Committed after the open transaction began: readers must wait for it (it may write before them).
    await seedCompetitors(db.pool, store, { count: 3, seed: 1, batchSize: 3 });
    const projection = allProjections.find((p) => p.name === 'competitor-list');
    if (!projection) throw new Error('no competitor-list projection');
    const failure = await runner.catchUp(projection, 300).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure).toBeInstanceOf(Error);
    expect(failure?.message).toContain('made no progress');
    expect(failure?.message).toContain(`pid ${rows[0]?.pid}`);
    expect(failure?.message).toContain('forgotten psql');
    expect(failure?.message).toContain(db.url ? new URL(db.url).pathname.slice(1) : 'no url');
    await open.query('ROLLBACK');
    // Once it ends, the catch-up goes through.
    expect(await runner.catchUp(projection)).toBeGreaterThan(0);
  });
});
