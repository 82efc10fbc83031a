import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventRegistry } from '#events/all-events.ts';
import type { EventStore } from '#events/store/event-store.ts';
import { exportEvents } from '#events/store/export-log.ts';
import { takeRebuildLease } from '#projections/rebuild/rebuild-lease.ts';
import { seedCompetitors } from '#services/seed/seed-competitors.ts';
import { runs } from '#tests/support/environment.ts';
import { writeSide } from '#tests/support/runtime-pieces.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';
import { until } from '#tests/support/until.ts';

/**
 * A connection an operator command keeps checked out (the export's snapshot, a rebuild's lock) that dies
 * (Postgres restarted, the backend terminated): pg emitted an unhandled 'error' on the client, which
 * crashed the command with a stack trace (and left the export's partial file behind). Only Postgres has
 * connections to lose: the embedded database runs in the process.
 */
describe.each(runs('postgres') ? ['postgres'] : [])('a lost connection on %s', (backend) => {
  let db: TestDatabase;
  let store: EventStore;
  let admin: pg.Client;
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);

  /** Terminates this database's backends running `query` (as pg_stat_activity shows it). */
  async function terminate(query: string): Promise<number> {
    const { rows } = await admin.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
         AND query LIKE $1`,
      [`%${query}%`],
    );
    for (const { pid } of rows) await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    return rows.length;
  }

  beforeAll(async () => {
    db = await createTestDatabase(backend as 'postgres');
    ({ store } = await writeSide(db));
    await seedCompetitors(db.pool, store, { count: 50, seed: 5, batchSize: 50 });
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    process.on('uncaughtException', onUncaught);
  });
  afterAll(async () => {
    process.off('uncaughtException', onUncaught);
    await admin.end();
    await db.drop();
  });

  it('an export whose connection dies fails with the connection error, and the process lives on', async () => {
    const events = exportEvents(db.pool, eventRegistry, {}, 10);
    expect((await events.next()).done).toBe(false);
    expect(await terminate('FROM events')).toBe(1);
    // The client hears the termination before anyone asks it anything.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const rest = (async () => {
      for (let next = await events.next(); !next.done; next = await events.next());
    })();
    await expect(rest).rejects.toThrow(/terminat|connection/i);
    expect(uncaught).toEqual([]);
    // The pool still works: the broken client was not given back to it.
    const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events');
    expect(rows[0]?.n).toBeGreaterThan(0);
  });

  it("a rebuild's lock connection that dies marks the lease lost, and the process lives on", async () => {
    const lease = await takeRebuildLease(db, ['audit-log']);
    expect(lease.lost.aborted).toBe(false);
    expect(await terminate('pg_try_advisory_lock')).toBe(1);
    await until(() => lease.lost.aborted, 'the lease to be marked lost');
    expect(String(lease.lost.reason)).toMatch(/audit-log.*lost.*replay again/);
    expect(uncaught).toEqual([]);
    await lease.release();
    // The lock went with the connection: the next rebuild takes it.
    const next = await takeRebuildLease(db, ['audit-log']);
    await next.release();
  });
});
