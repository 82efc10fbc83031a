import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventRegistry } from '#events/all-events.ts';
import { startOfLog, type Recorded } from '#events/envelope.ts';
import { createEventStore, type EventStore } from '#events/store/event-store.ts';
import { seedCompetitors } from '#services/seed/seed-competitors.ts';
import {
  foldOrdering,
  initialOrderingState,
  orderingSourceTypes,
  type OrderingSourceEvent,
  type OrderingState,
} from '#services/ordering/ordering-state.ts';
import { SNAPSHOT_EVERY, withOrdering } from '#services/ordering/reorder.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { envelope, writeSide } from '#tests/support/runtime-pieces.ts';
import { waitUntilLogSettled } from '#tests/support/settled-log.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';

/**
 * The ordering decider needs a fold of the whole log. A worker's first reorder must not read all of
 * it: it starts from the newest saved snapshot and reads only what came after. Each "worker" here is a
 * fresh EventStore (the fold is kept per store), and every event handed to the fold is counted.
 */

const COMPETITORS = SNAPSHOT_EVERY + 200;

/** A new worker's store that counts the events its reads return. */
function countingStore(db: TestDatabase) {
  const store = createEventStore(db.pool, eventRegistry);
  const read = { events: 0 };
  const readTypes = store.readTypes.bind(store);
  store.readTypes = async (...args: Parameters<EventStore['readTypes']>) => {
    const result = await readTypes(...args);
    read.events += result.events.length;
    return result;
  };
  return { store, read };
}

/** The fold from the very start of the log, the slow way: what any snapshot must agree with. */
async function foldFromStart(store: EventStore): Promise<OrderingState> {
  const state = initialOrderingState();
  let checkpoint = startOfLog;
  for (;;) {
    const { events } = await store.readTypes(checkpoint, orderingSourceTypes, 5_000);
    for (const e of events) foldOrdering(state, e as Recorded<OrderingSourceEvent>);
    const last = events.at(-1);
    if (!last) return state;
    checkpoint = { transactionId: last.transactionId, position: last.position };
  }
}

describe.each(databaseBackends)('the ordering fold starts from a snapshot on %s', (backend) => {
  let db: TestDatabase;
  let side: Awaited<ReturnType<typeof writeSide>>;

  beforeAll(async () => {
    db = await createTestDatabase(backend);
    side = await writeSide(db);
    await seedCompetitors(db.pool, side.store, { count: COMPETITORS, seed: 7 });
  });
  afterAll(async () => db?.drop());

  it("a worker's first reorder reads only the events after the newest snapshot", async () => {
    // The first worker ever finds no snapshot: it folds the whole log once, and saves what it folded.
    await waitUntilLogSettled(db.pool);
    const first = countingStore(db);
    const ranking = await withOrdering(first.store, (s) => [...s.ranking]);
    expect(ranking).toHaveLength(COMPETITORS);
    expect(first.read.events).toBeGreaterThanOrEqual(COMPETITORS);

    // Then the log moves on: a reorder and a few more competitors.
    const dropped = [ranking.at(-1) as string, ...ranking.slice(0, -1)].map((value, i) => ({
      order: i + 1,
      value,
    }));
    const reorder = await side.route(
      envelope({ type: 'ReorderRanking', payload: { items: dropped, expectedVersion: 0 } }),
    );
    expect(reorder.status).toBe('accepted');
    const moves = (await side.store.readStream('ordering')).events.length;
    await seedCompetitors(db.pool, side.store, { count: 3, seed: 8 });

    // A new worker starts from the snapshot: it reads the reorder's moves and the 3 adds, not the log.
    await waitUntilLogSettled(db.pool);
    const next = countingStore(db);
    const state = await withOrdering(next.store, (s) => s);
    expect(moves).toBe(1);
    expect(next.read.events).toBe(moves + 3);
    const full = await foldFromStart(next.store);
    expect(state.version).toBe(full.version);
    expect(state.ranking).toEqual(full.ranking);
    expect([...state.competitors]).toEqual([...full.competitors]);
    expect(state.segments).toEqual(full.segments);
    expect(state.recent).toEqual(full.recent);
  });
});
