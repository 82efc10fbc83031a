import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eventRegistry } from '#events/all-events.ts';
import { compareCheckpoints, startOfLog, type Checkpoint, type RecordedEvent } from '#events/envelope.ts';
import { createEventStore, type EventStore } from '#events/store/event-store.ts';
import { withTransaction } from '#infra/db/database.ts';
import { allProjections } from '#projections/all-projections.ts';
import { competitorListProjection } from '#projections/competitor-list/competitor-list.projection.ts';
import { findCompetitor } from '#projections/competitor-list/competitor-list.queries.ts';
import { rebuildProjections } from '#projections/rebuild/rebuild.ts';
import { ProjectionRunner } from '#projections/runner.ts';
import { ProjectionWatcher } from '#projections/watcher.ts';
import type { CommandRouter } from '#services/command-router.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { addCompetitorCommand, envelope, silentLog, writeSide } from '#tests/support/runtime-pieces.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(databaseBackends)('projections on %s', (backend) => {
  let db: TestDatabase;
  let store: EventStore;
  let route: CommandRouter;
  let runner: ProjectionRunner;
  let watcher: ProjectionWatcher;
  const reacted: { projection: string; positions: number[] }[] = [];

  beforeAll(async () => {
    db = await createTestDatabase(backend, { poolSize: 20 });
    ({ store, route, runner } = await writeSide(db));
    runner.onCommitted((projection, events) =>
      reacted.push({ projection, positions: events.map((e) => e.position) }),
    );
    await runner.start();
    watcher = new ProjectionWatcher(db);
    await watcher.start();
  });
  afterAll(async () => {
    await watcher.stop();
    await runner.stop();
    await db.drop();
  });

  it('projects a command and lets the requester wait for it (read-your-writes)', async () => {
    const command = addCompetitorCommand(`Wait-${randomUUID()}`);
    const outcome = await route(envelope(command));
    if (outcome.status !== 'accepted') throw new Error(outcome.message);
    const target = { transactionId: outcome.transactionId, position: Math.max(...outcome.positions) };
    expect(await watcher.waitFor(['competitor-list'], target, 5_000)).toBe(true);
    expect(await findCompetitor(db.pool, command.payload.competitorId)).toMatchObject({
      name: command.payload.name,
    });
    // Reactors hear about it after the commit, with positions: the runner calls them once its NOTIFY
    // is sent, which may be after this watcher (another listener) has seen the checkpoint.
    await vi.waitFor(
      () =>
        expect(
          reacted.some((r) => r.projection === 'competitor-list' && r.positions.includes(target.position)),
        ).toBe(true),
      { timeout: 5_000 },
    );
  });

  it('times out waiting for a position nobody will reach', async () => {
    let settled = false;
    const never = watcher
      .waitFor(['competitor-list'], { transactionId: '999999999999', position: 1 }, 3_000)
      .finally(() => (settled = true));
    // A wait on a position already reached is answered by a check; the unreachable one outlives it.
    expect(await watcher.waitFor(['competitor-list'], startOfLog, 2_000)).toBe(true);
    expect(settled).toBe(false);
    expect(await never).toBe(false);
  });

  it('a runner in the same process answers a wait with its own commit, and only for what it committed', async () => {
    // A watcher of its own, told by the runner directly (as the runtime wires them): no NOTIFY, no poll
    // (the poll is an hour), so only the runner's report can answer within the wait.
    const local = new ProjectionWatcher(db, 3_600_000);
    const stopListening = runner.onCheckpoint((projection, checkpoint) =>
      local.reached(projection, checkpoint),
    );
    try {
      const command = addCompetitorCommand(`Local-${randomUUID()}`);
      const outcome = await route(envelope(command));
      if (outcome.status !== 'accepted') throw new Error(outcome.message);
      const target = { transactionId: outcome.transactionId, position: Math.max(...outcome.positions) };
      runner.wake();
      expect(await local.waitFor(['competitor-list', 'audit-log'], target, 5_000)).toBe(true);
      expect(await findCompetitor(db.pool, command.payload.competitorId)).toMatchObject({
        name: command.payload.name,
      });
      // Its report for one projection does not answer for another.
      const beyond = { transactionId: '999999999999', position: 1 };
      const listWait = local.waitFor(['competitor-list'], beyond, 1_000);
      const auditWait = local.waitFor(['audit-log'], beyond, 300);
      local.reached('competitor-list', beyond);
      expect(await listWait).toBe(true);
      expect(await auditWait).toBe(false);
    } finally {
      stopListening();
      await local.stop();
    }
  });

  it('a rebuild gives the same rows as live and calls no reactor', async () => {
    for (let i = 0; i < 5; i++) await route(envelope(addCompetitorCommand(`Rebuild-${i}-${randomUUID()}`)));
    await waitForAll();
    // Reactors run just after the commit the watcher saw; let the last live batch's call land first.
    await sleep(100);
    const before = reacted.length;
    const [result] = await rebuildProjections(db, store, [competitorListProjection], {
      batchSize: 3,
      dryRun: true,
    });
    expect(result?.events).toBeGreaterThan(5);
    expect(result?.differences).toBe(0);
    expect(reacted.length).toBe(before);
  });

  it('rebuilds a projection whose code version changed', async () => {
    const bumped = { ...competitorListProjection, version: competitorListProjection.version + 100 };
    const other = new ProjectionRunner({ db, store, projections: [bumped], log: silentLog });
    await runner.stop();
    try {
      await db.pool.query(`UPDATE competitor_list SET name = 'corrupted'`);
      await other.catchUp(bumped);
      const { rows } = await db.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM competitor_list WHERE name = 'corrupted'`,
      );
      expect(rows[0]?.n).toBe(0);
      expect(
        (
          await db.pool.query<{ version: number }>(
            `SELECT version FROM projection_checkpoints WHERE projection = 'competitor-list'`,
          )
        ).rows[0]?.version,
      ).toBe(bumped.version);
      // Back to the code's version (an operator's replay: runners never take a projection back to an
      // older version, see the rolling-upgrade test in rebuild.test.ts).
      await rebuildProjections(db, store, [competitorListProjection]);
    } finally {
      runner = new ProjectionRunner({ db, store, projections: allProjections, log: silentLog });
      await runner.start();
      await waitForAll();
    }
    const { rows } = await db.pool.query<{ rank: number }>('SELECT rank FROM competitor_list ORDER BY rank');
    expect(rows.map((r) => r.rank)).toEqual(rows.map((_, i) => i + 1));
  });

  it('late commits: across 500 randomized rounds with concurrent writers and 10% rollbacks, the reader skips 0 events', async () => {
    // On Postgres a transaction holding an id without writing the log stays open throughout (as a
    // projection's own transaction does): readers pass over it (decision 0028), so every read takes that
    // path too. (The embedded database has one connection: it would hold every writer back.)
    const bystander = backend === 'postgres' ? await db.pool.connect() : undefined;
    await bystander?.query('BEGIN');
    await bystander?.query('SELECT pg_current_xact_id()');
    const start = await headCheckpoint();
    const committed = new Set<number>();
    const read: number[] = [];
    let writing = true;
    const writers = 8;
    const rounds = 500;
    let round = 0;
    const writer = async () => {
      while (round < rounds) {
        round++;
        const rollback = Math.random() < 0.1;
        const positions = await withTransaction(db.pool, async (client) => {
          const txStore = createEventStore(client, eventRegistry);
          const id = randomUUID();
          const result = await txStore.append(
            `late-${id}`,
            [{ type: 'CompetitorDeleted', data: { competitorId: id, name: 'x' } }],
            0,
            randomUUID(),
            {
              actor: { id: 'late', name: 'Late' },
              commandId: id,
              correlationId: id,
              at: new Date().toISOString(),
            },
          );
          // Hold the transaction open while others commit after us.
          await sleep(Math.random() * 12);
          if (rollback) throw new RolledBack();
          return result.kind === 'appended' ? result.outcome.positions : [];
        }).catch((error: unknown) => {
          if (error instanceof RolledBack) return [];
          throw error;
        });
        for (const p of positions) committed.add(p);
      }
    };
    const reader = async () => {
      let checkpoint: Checkpoint = start;
      for (;;) {
        const done = !writing;
        const events = await store.readAll(checkpoint, 7);
        for (const e of events) read.push(e.position);
        if (events.length > 0) checkpoint = events.at(-1) as RecordedEvent;
        else if (done && !(await store.hasUnsettled(checkpoint))) return;
        else await sleep(1);
      }
    };
    const reading = reader();
    try {
      await Promise.all(Array.from({ length: writers }, writer));
      writing = false;
      await reading;
    } finally {
      await bystander?.query('ROLLBACK');
      bystander?.release();
    }
    const mine = read.filter((p) => committed.has(p));
    expect(committed.size).toBeGreaterThan(400);
    expect(new Set(read).size).toBe(read.length);
    expect(mine.length).toBe(committed.size);
    expect([...committed].filter((p) => !read.includes(p))).toEqual([]);
  });

  async function headCheckpoint(): Promise<Checkpoint> {
    const events = await store.readAll({ transactionId: '0', position: 0 }, 1_000_000);
    return events.reduce<Checkpoint>((max, e) => (compareCheckpoints(e, max) > 0 ? e : max), {
      transactionId: '0',
      position: 0,
    });
  }

  async function waitForAll(): Promise<void> {
    const { rows } = await db.pool.query<{ tx: string; position: number }>(
      'SELECT transaction_id::text AS tx, position FROM events ORDER BY transaction_id DESC, position DESC LIMIT 1',
    );
    const head = rows[0];
    if (!head) return;
    const reached = await watcher.waitFor(
      allProjections.map((p) => p.name),
      { transactionId: head.tx, position: head.position },
      10_000,
    );
    expect(reached).toBe(true);
  }
});

// Several connections at once: a real server only (the embedded database is one connection).
describe.each(databaseBackends.filter((b) => b === 'postgres'))('the projection runner on %s', () => {
  // A transaction that holds the commit-safe horizon back and ends without a notification (any write
  // elsewhere: another projection's batch, a session) must not strand the events past it until the
  // slow poll. Several connections at once: a real server only.
  it('events held back by a transaction that ends without a notification are projected without the poll', async () => {
    const own = await createTestDatabase('postgres');
    const blocker = await own.pool.connect();
    const { store: ownStore, route: ownRoute } = await writeSide(own);
    const ownRunner = new ProjectionRunner({
      db: own,
      store: ownStore,
      projections: [competitorListProjection],
      log: silentLog,
      pollMs: 3_600_000,
    });
    try {
      const before = addCompetitorCommand(`Before-${randomUUID()}`);
      const after = addCompetitorCommand(`After-${randomUUID()}`);
      expect((await ownRoute(envelope(before))).status).toBe('accepted');
      // A transaction that may write the log, with an id older than the next event's: the horizon stops
      // below it (one that cannot write the log holds nothing back, decision 0028).
      await blocker.query('BEGIN');
      await blocker.query('SELECT log_append_lock(), pg_current_xact_id()');
      expect((await ownRoute(envelope(after))).status).toBe('accepted');
      await ownRunner.start();
      // The first batch applies what lies below the horizon, and not what lies past it.
      await expect
        .poll(() => findCompetitor(own.pool, before.payload.competitorId), { timeout: 5_000 })
        .toBeTruthy();
      expect(await findCompetitor(own.pool, after.payload.competitorId)).toBeUndefined();
      // It ends with no event and no NOTIFY; the hour-long poll cannot be what finds the rest.
      await blocker.query('ROLLBACK');
      await expect
        .poll(() => findCompetitor(own.pool, after.payload.competitorId), { timeout: 5_000 })
        .toBeTruthy();
    } finally {
      await blocker.query('ROLLBACK').catch(() => undefined);
      blocker.release();
      await ownRunner.stop();
      await own.drop();
    }
  });
});

class RolledBack extends Error {}
