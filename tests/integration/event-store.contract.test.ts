import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventRegistry } from '#events/all-events.ts';
import type { EventMetadata, NewEvent, RecordedEvent } from '#events/envelope.ts';
import { startOfLog } from '#events/envelope.ts';
import { hasUnsettledSql } from '#events/store/event-log-reader.ts';
import { createEventStore, type EventStore } from '#events/store/event-store.ts';
import { databaseBackends, HEAVY_TEST_TIMEOUT_MS } from '#tests/support/environment.ts';
import { genericPlan } from '#tests/support/generic-plan.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';

const meta = (commandId: string): EventMetadata => ({
  actor: { id: 'u', name: 'U' },
  commandId,
  correlationId: commandId,
  at: new Date().toISOString(),
});
const deleted = (competitorId: string): NewEvent => ({
  type: 'CompetitorDeleted',
  data: { competitorId, name: 'x' },
});

describe.each(databaseBackends)('event store on %s', (backend) => {
  let db: TestDatabase;
  let store: EventStore;

  beforeAll(async () => {
    db = await createTestDatabase(backend, { poolSize: 60 });
    store = createEventStore(db.pool, eventRegistry);
  });
  afterAll(async () => db.drop());

  it('appends at the expected version and reads the stream back in order', async () => {
    const stream = `test-${randomUUID()}`;
    const id = randomUUID();
    const first = await store.append(stream, [deleted(id), deleted(id)], 0, randomUUID(), meta('a'));
    expect(first).toMatchObject({ kind: 'appended', outcome: { status: 'accepted', streamVersion: 2 } });
    const positions = first.kind === 'appended' ? first.outcome.positions : [];
    expect(positions).toHaveLength(2);
    const read = await store.readStream(stream);
    expect(read.version).toBe(2);
    expect(read.events.map((e) => [e.streamVersion, e.position, e.type])).toEqual([
      [1, positions[0], 'CompetitorDeleted'],
      [2, positions[1], 'CompetitorDeleted'],
    ]);
    expect(read.events[0]?.transactionId).toBe(first.kind === 'appended' ? first.outcome.transactionId : '');
  });

  it('reports a conflict when the stream moved, and writes nothing', async () => {
    const stream = `test-${randomUUID()}`;
    await store.append(stream, [deleted(randomUUID())], 0, randomUUID(), meta('a'));
    const stale = await store.append(stream, [deleted(randomUUID())], 0, randomUUID(), meta('b'));
    expect(stale).toEqual({ kind: 'conflict' });
    expect((await store.readStream(stream)).version).toBe(1);
  });

  it('answers a repeated command id with its first outcome and appends nothing', async () => {
    const stream = `test-${randomUUID()}`;
    const commandId = randomUUID();
    const first = await store.append(stream, [deleted(randomUUID())], 0, commandId, meta(commandId));
    const again = await store.append(stream, [deleted(randomUUID())], 1, commandId, meta(commandId));
    expect(first.kind).toBe('appended');
    expect(again).toEqual({
      kind: 'duplicate',
      outcome: first.kind === 'appended' ? first.outcome : undefined,
    });
    expect((await store.readStream(stream)).version).toBe(1);
  });

  it('keeps the first recorded rejection for a command id', async () => {
    const commandId = randomUUID();
    const first = await store.recordOutcome(commandId, 's', {
      status: 'rejected',
      code: 'validation',
      message: 'first',
    });
    const second = await store.recordOutcome(commandId, 's', {
      status: 'rejected',
      code: 'validation',
      message: 'second',
    });
    expect(first).toMatchObject({ message: 'first' });
    expect(second).toMatchObject({ message: 'first' });
    expect(await store.findOutcome(commandId)).toMatchObject({ message: 'first' });
  });

  it('rejects events that do not match their schema, and unknown types', async () => {
    await expect(
      store.append(
        's-bad',
        [{ type: 'CompetitorDeleted', data: { competitorId: 'nope' } }],
        0,
        randomUUID(),
        meta('x'),
      ),
    ).rejects.toThrow();
    await expect(
      store.append('s-bad', [{ type: 'SomethingHappened', data: {} }], 0, randomUUID(), meta('x')),
    ).rejects.toThrow('unknown event type SomethingHappened');
  });

  it('refuses UPDATE, DELETE and TRUNCATE on events', async () => {
    await store.append(`test-${randomUUID()}`, [deleted(randomUUID())], 0, randomUUID(), meta('a'));
    await expect(db.pool.query(`UPDATE events SET type = 'X'`)).rejects.toThrow(/append-only/);
    await expect(db.pool.query('DELETE FROM events')).rejects.toThrow(/append-only/);
    await expect(db.pool.query('TRUNCATE events')).rejects.toThrow(/append-only/);
  });

  /**
   * readAll stops below the oldest transaction running anywhere on the server (other test files share
   * it), so "everything" arrives eventually rather than at one instant: read until the log is complete.
   */
  async function readWholeLog(batchSize: number): Promise<RecordedEvent[]> {
    const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events');
    const expected = rows[0]?.n ?? 0;
    const all: RecordedEvent[] = [];
    const deadline = Date.now() + 10_000;
    while (all.length < expected && Date.now() < deadline) {
      const batch = await store.readAll(all.at(-1) ?? startOfLog, batchSize);
      if (batch.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      all.push(...batch);
    }
    return all;
  }

  it('reads the whole log after a checkpoint in commit order', async () => {
    const all = await readWholeLog(100_000);
    const after = all[Math.floor(all.length / 2)];
    expect(all.length).toBeGreaterThan(3);
    const rest = await store.readAll(after ?? startOfLog, 100_000);
    expect(rest.map((e) => e.position)).toEqual(
      all.slice(Math.floor(all.length / 2) + 1).map((e) => e.position),
    );
  });

  it(
    '50 writers × 200 rounds on one stream: exactly one winner per round, no duplicate versions',
    async () => {
      const stream = `race-${randomUUID()}`;
      const writers = 50;
      const rounds = 200;
      // Several stores, like several worker processes: each groups its own writes, one does not group at
      // all, so grouped and single statements race each other in the database.
      const stores = [
        store,
        ...Array.from({ length: 4 }, () => createEventStore(db.pool, eventRegistry)),
        createEventStore(db.pool, eventRegistry, { groupCommit: false }),
      ];
      let winners = 0;
      for (let round = 0; round < rounds; round++) {
        const results = await Promise.all(
          Array.from({ length: writers }, (_, w) =>
            stores[w % stores.length]!.append(
              stream,
              [deleted(randomUUID())],
              round,
              randomUUID(),
              meta('r'),
            ),
          ),
        );
        const won = results.filter((r) => r.kind === 'appended').length;
        expect(won).toBe(1);
        winners += won;
      }
      const read = await store.readStream(stream);
      expect(read.version).toBe(winners);
      expect(new Set(read.events.map((e) => e.streamVersion)).size).toBe(winners);
      expect(read.events.map((e) => e.streamVersion)).toEqual(
        Array.from({ length: winners }, (_, i) => i + 1),
      );
    },
    HEAVY_TEST_TIMEOUT_MS,
  );
  it('reads the whole log in numeric transaction order, across digit boundaries of the ids', async () => {
    // A fresh PGlite starts near id 750, and the race above ran 10,000 transactions, so ids here cross
    // 1,000 and 10,000. A shared Postgres server's ids are wherever the cluster is: ordering still holds.
    const all = await readWholeLog(997);
    const { rows } = await db.pool.query<{ n: number; digits: number }>(
      'SELECT count(*)::int AS n, count(DISTINCT length(transaction_id::text))::int AS digits FROM events',
    );
    if (backend === 'embedded') expect(rows[0]?.digits).toBeGreaterThan(1);
    expect(all).toHaveLength(rows[0]?.n ?? -1);
    for (let i = 1; i < all.length; i++) {
      const [a, b] = [all[i - 1]!, all[i]!];
      expect(
        BigInt(a.transactionId) < BigInt(b.transactionId) ||
          (a.transactionId === b.transactionId && a.position < b.position),
      ).toBe(true);
    }
  });

  // Last: it leaves an unreadable event in this database's log.
  it('fails loudly on a stored event of an unknown type or a future schema version', async () => {
    const stream = `test-${randomUUID()}`;
    await db.pool.query(
      `INSERT INTO events (stream, stream_version, type, schema_version, data, metadata, command_id)
       VALUES ($1, 1, 'CompetitorDeleted', 9, '{}', '{}', 'c')`,
      [stream],
    );
    await expect(store.readStream(stream)).rejects.toThrow('schema version 9');
  });
  it('looks for events after a checkpoint from the checkpoint on, never through the whole log', async () => {
    await db.pool.query(
      `INSERT INTO events (stream, stream_version, type, schema_version, data, metadata, command_id)
       SELECT 'plan-' || i, 1, 'CompetitorDeleted', 1, '{}', '{}', 'plan-' || i FROM generate_series(1, 3000) AS i`,
    );
    await db.pool.query('ANALYZE events');
    const plan = await genericPlan(db, hasUnsettledSql, `'0', 0`);
    expect(plan).toMatch(/Index (Only )?Scan using events_commit_order on events/);
    expect(plan).not.toMatch(/Seq Scan on events/);
    const { rows } = await db.pool.query<{ unsettled: boolean }>(hasUnsettledSql, ['0', 0]);
    expect(rows[0]?.unsettled).toBe(true);
  });
});
