import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventRegistry } from '#events/all-events.ts';
import type { Outcome } from '#events/command.ts';
import type { EventMetadata, NewEvent } from '#events/envelope.ts';
import type { AppendResult } from '#events/store/event-log-writer.ts';
import { groupAppendSql } from '#events/store/group-append.ts';
import { createEventStore, type EventStore } from '#events/store/event-store.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { genericPlan } from '#tests/support/generic-plan.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';

const meta = (commandId: string): EventMetadata => ({
  actor: { id: 'u', name: 'U' },
  commandId,
  correlationId: commandId,
  at: new Date().toISOString(),
});
const deleted = (): NewEvent => ({
  type: 'CompetitorDeleted',
  data: { competitorId: randomUUID(), name: 'x' },
});
const rejection: Outcome = { status: 'rejected', code: 'validation', message: 'No.' };
const txOf = (result: AppendResult) =>
  result.kind === 'appended' ? result.outcome.transactionId : undefined;

/**
 * Group commit (decision 0014) keeps every guarantee of a single append, per item: a store with one
 * statement slot makes every write that arrives while a statement runs wait for the next group.
 */
describe.each(databaseBackends)('group commit on %s', (backend) => {
  let db: TestDatabase;
  let store: EventStore;

  beforeAll(async () => {
    db = await createTestDatabase(backend, { poolSize: 20 });
    store = createEventStore(db.pool, eventRegistry, { groupCommit: { maxInFlight: 1 } });
  });
  afterAll(async () => db.drop());

  /** A write that holds the only statement slot, so the writes after it gather into one group. */
  const opener = () => store.append(`open-${randomUUID()}`, [deleted()], 0, randomUUID(), meta('o'));

  it('appends many streams in one transaction; a stream that moved conflicts alone', async () => {
    const moved = `moved-${randomUUID()}`;
    await store.append(moved, [deleted()], 0, randomUUID(), meta('m'));
    const fresh = Array.from({ length: 6 }, () => `fresh-${randomUUID()}`);
    const [, ...results] = await Promise.all([
      opener(),
      ...fresh.map((stream) => store.append(stream, [deleted(), deleted()], 0, randomUUID(), meta('f'))),
      store.append(moved, [deleted()], 0, randomUUID(), meta('stale')),
    ]);
    const conflict = results.pop();
    expect(conflict).toEqual({ kind: 'conflict' });
    expect(results.every((r) => r.kind === 'appended')).toBe(true);
    // One group: one transaction for all of them.
    expect(new Set(results.map(txOf)).size).toBe(1);
    for (const [i, stream] of fresh.entries()) {
      const read = await store.readStream(stream);
      expect(read.version).toBe(2);
      const result = results[i]!;
      expect(result.kind === 'appended' && result.outcome.positions).toEqual(
        read.events.map((e) => e.position),
      );
      expect(result.kind === 'appended' && result.outcome.streamVersion).toBe(2);
    }
    expect((await store.readStream(moved)).version).toBe(1);
  });

  it('answers a repeated command id in a group with its first outcome, appending nothing', async () => {
    const stream = `dup-${randomUUID()}`;
    const commandId = randomUUID();
    const first = await store.append(stream, [deleted()], 0, commandId, meta(commandId));
    const other = `other-${randomUUID()}`;
    const [, again, next] = await Promise.all([
      opener(),
      store.append(stream, [deleted()], 1, commandId, meta(commandId)),
      store.append(other, [deleted()], 0, randomUUID(), meta('n')),
    ]);
    expect(first.kind).toBe('appended');
    expect(again).toEqual({
      kind: 'duplicate',
      outcome: first.kind === 'appended' ? first.outcome : undefined,
    });
    expect(next.kind).toBe('appended');
    expect((await store.readStream(stream)).version).toBe(1);
  });

  it('records rejections in a group; the first recorded outcome of a command id wins', async () => {
    const ids = Array.from({ length: 4 }, () => randomUUID());
    const [, ...recorded] = await Promise.all([
      opener(),
      ...ids.map((id) => store.recordOutcome(id, `r-${id}`, rejection)),
    ]);
    expect(recorded).toEqual(ids.map(() => rejection));
    const later: Outcome = { status: 'accepted', positions: [], transactionId: '0', streamVersion: 0 };
    const [, again, appended] = await Promise.all([
      opener(),
      store.recordOutcome(ids[0]!, `r-${ids[0]}`, later),
      store.append(`r-${ids[1]}`, [deleted()], 0, ids[1]!, meta(ids[1]!)),
    ]);
    expect(again).toEqual(rejection);
    // A command first rejected stays rejected: a redelivery cannot append.
    expect(appended).toEqual({ kind: 'duplicate', outcome: rejection });
    expect((await store.readStream(`r-${ids[1]}`)).version).toBe(0);
  });

  it('puts one stream at most once in a group: writes to the same stream are decided in order', async () => {
    const stream = `same-${randomUUID()}`;
    const results = await Promise.all([
      opener(),
      ...Array.from({ length: 5 }, (_, v) => store.append(stream, [deleted()], v, randomUUID(), meta('s'))),
    ]);
    expect(results.every((r) => r.kind === 'appended')).toBe(true);
    expect((await store.readStream(stream)).version).toBe(5);
  });

  it('200 concurrent deliveries of 50 commands through 4 grouping stores: one event and one outcome per command', async () => {
    const stores = Array.from({ length: 4 }, () => createEventStore(db.pool, eventRegistry));
    const commands = Array.from({ length: 50 }, (_, i) => ({
      id: randomUUID(),
      stream: `idem-${i}-${randomUUID()}`,
    }));
    const deliveries = [...commands, ...commands, ...commands, ...commands].sort(() => Math.random() - 0.5);
    // As handleCommand does: a lost race is retried from the stream's current version.
    const deliver = async (c: (typeof commands)[number], via: EventStore): Promise<AppendResult> => {
      for (;;) {
        const { version } = await via.readStream(c.stream);
        const result = await via.append(c.stream, [deleted()], version, c.id, meta(c.id));
        if (result.kind !== 'conflict') return result;
      }
    };
    const results = await Promise.all(deliveries.map((c, i) => deliver(c, stores[i % stores.length]!)));
    const outcomes = new Map<string, string[]>();
    results.forEach((r, i) => {
      const { id } = deliveries[i]!;
      expect(r.kind).not.toBe('conflict');
      const outcome = r.kind === 'conflict' ? '' : JSON.stringify(r.outcome);
      outcomes.set(id, [...(outcomes.get(id) ?? []), outcome]);
    });
    for (const c of commands) {
      expect(new Set(outcomes.get(c.id)).size).toBe(1);
      expect((await store.readStream(c.stream)).version).toBe(1);
    }
  });
  it('looks earlier outcomes up by key, never by reading the whole outcomes table', async () => {
    // The plan a named statement keeps (generic) once the table holds thousands of outcomes: a join
    // let the planner hash every outcome on each append, O(all commands ever) per group.
    await db.pool.query(
      `INSERT INTO command_outcomes (command_id, stream, outcome)
       SELECT 'bulk-' || i, 'bulk', '{"status":"accepted"}' FROM generate_series(1, 1500) AS i`,
    );
    await db.pool.query('ANALYZE command_outcomes');
    const plan = await genericPlan(
      db,
      groupAppendSql,
      `'{0}', '{s}', '{0}', '{1}', '{c}', '{"{}"}', '{NULL}', '{0}', '{1}', '{T}', '{1}', '{"{}"}'`,
    );
    expect(plan).toContain('command_outcomes_pkey on command_outcomes c');
    expect(plan).not.toMatch(/Seq Scan on command_outcomes/);
  });
});
