import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Outcome } from '#events/command.ts';
import { findCompetitor, listCompetitors } from '#projections/competitor-list/competitor-list.queries.ts';
import { eventRegistry } from '#events/all-events.ts';
import { createEventStore } from '#events/store/event-store.ts';
import { allProjections } from '#projections/all-projections.ts';
import { createCommandRouter } from '#services/command-router.ts';
import { StateCache } from '#services/state-cache.ts';
import type { CommandRouter } from '#services/command-router.ts';
import type { ProjectionRunner } from '#projections/runner.ts';
import { databaseBackends, HEAVY_TEST_TIMEOUT_MS } from '#tests/support/environment.ts';
import { addCompetitorCommand, envelope, writeSide } from '#tests/support/runtime-pieces.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';

describe.each(databaseBackends)('command handling on %s', (backend) => {
  let db: TestDatabase;
  let route: CommandRouter;
  let runner: ProjectionRunner;
  const catchUp = async () => {
    for (const projection of allProjections) await runner.catchUp(projection);
  };

  beforeAll(async () => {
    db = await createTestDatabase(backend, { poolSize: 20 });
    ({ route, runner } = await writeSide(db));
  });
  afterAll(async () => db.drop());

  it('adds a competitor and shows it in the list after projection', async () => {
    const command = addCompetitorCommand('Globex', { website: 'https://globex.example', threat: 'high' });
    const outcome = await route(envelope(command));
    expect(outcome).toMatchObject({ status: 'accepted' });
    await catchUp();
    const row = await findCompetitor(db.pool, command.payload.competitorId);
    expect(row).toMatchObject({ name: 'Globex', segmentName: 'SMB', threat: 'high', rank: 1, version: 1 });
  });

  it('rejects a duplicate name, case-insensitively, with a field message', async () => {
    await route(envelope(addCompetitorCommand('Initech')));
    const outcome = await route(envelope(addCompetitorCommand('  initech ')));
    expect(outcome).toMatchObject({
      status: 'rejected',
      code: 'conflict',
      fields: { name: expect.stringContaining('already exists') },
    });
  });

  it('frees a name on rename and on delete', async () => {
    const first = addCompetitorCommand('Umbrella');
    const id = first.payload.competitorId;
    await route(envelope(first));
    const renamed = await route(
      envelope({
        type: 'UpdateCompetitor',
        payload: { ...(first.payload as object), competitorId: id, name: 'Umbrella Corp' } as never,
      }),
    );
    expect(renamed.status).toBe('accepted');
    expect(await route(envelope(addCompetitorCommand('Umbrella')))).toMatchObject({ status: 'accepted' });
    expect(await route(envelope(addCompetitorCommand('umbrella corp')))).toMatchObject({
      status: 'rejected',
    });
    await route(envelope({ type: 'DeleteCompetitor', payload: { competitorId: id } }));
    expect(await route(envelope(addCompetitorCommand('Umbrella Corp')))).toMatchObject({
      status: 'accepted',
    });
  });

  it('keeps ranks dense after deletes', async () => {
    const ids: string[] = [];
    for (const name of ['R1', 'R2', 'R3', 'R4']) {
      const command = addCompetitorCommand(`${name}-${randomUUID().slice(0, 6)}`);
      ids.push(command.payload.competitorId);
      await route(envelope(command));
    }
    await route(envelope({ type: 'DeleteCompetitor', payload: { competitorId: ids[1] as string } }));
    await catchUp();
    const { rows } = await db.pool.query<{ rank: number }>('SELECT rank FROM competitor_list ORDER BY rank');
    expect(rows.map((r) => r.rank)).toEqual(rows.map((_, i) => i + 1));
    expect(await findCompetitor(db.pool, ids[1] as string)).toBeUndefined();
  });

  it(
    '1,000 commands each delivered 3 times: exactly 1,000 events, repeats get the first outcome',
    async () => {
      const competitors = await Promise.all(
        Array.from({ length: 20 }, async () => {
          const add = addCompetitorCommand(`Idem-${randomUUID()}`);
          await route(envelope(add));
          return add.payload.competitorId;
        }),
      );
      const count = async () =>
        (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]?.n ?? 0;
      const before = await count();
      const envelopes = Array.from({ length: 1000 }, (_, i) =>
        envelope({
          type: 'UpdateCompetitorNote',
          payload: {
            competitorId: competitors[i % competitors.length]!,
            column: 'general',
            value: `idempotent note ${i}`,
          },
        }),
      );
      // Three deliveries of each, shuffled and handled concurrently, as a redelivering bus with several workers would.
      const deliveries = [...envelopes, ...envelopes, ...envelopes].sort(() => Math.random() - 0.5);
      const outcomes = new Map<string, Outcome[]>();
      const lanes = 8;
      await Promise.all(
        Array.from({ length: lanes }, async (_, lane) => {
          for (let i = lane; i < deliveries.length; i += lanes) {
            const delivery = deliveries[i]!;
            const outcome = await route(delivery);
            outcomes.set(delivery.commandId, [...(outcomes.get(delivery.commandId) ?? []), outcome]);
          }
        }),
      );
      expect((await count()) - before).toBe(1000);
      expect(outcomes.size).toBe(1000);
      for (const list of outcomes.values()) {
        expect(list).toHaveLength(3);
        expect(list[0]?.status).toBe('accepted');
        expect(list[1]).toEqual(list[0]);
        expect(list[2]).toEqual(list[0]);
      }
      const { rows } = await db.pool.query<{ n: number }>(
        `SELECT count(DISTINCT command_id)::int AS n FROM events WHERE type = 'CompetitorNoteUpdated' AND data->>'value' LIKE 'idempotent note %'`,
      );
      expect(rows[0]?.n).toBe(1000);
      await catchUp();
      const listed = await listCompetitors(db.pool, { search: 'idempotent note', page: 1, perPage: 100 });
      expect(listed.count).toEqual({ value: 20, exact: true });
    },
    HEAVY_TEST_TIMEOUT_MS,
  );

  it("a worker's cache of folded states continues with events other workers appended", async () => {
    const cache = new StateCache();
    const cachedRoute = createCommandRouter(createEventStore(db.pool, eventRegistry), { cache });
    const add = addCompetitorCommand(`Cache-${randomUUID()}`);
    await cachedRoute(envelope(add));
    const note = (value: string, expected?: number) =>
      envelope({
        type: 'UpdateCompetitorNote',
        payload: {
          competitorId: add.payload.competitorId,
          column: 'pricing',
          value,
          expectedNoteVersion: expected,
        },
      });
    expect(await cachedRoute(note('one', 0))).toMatchObject({ status: 'accepted', streamVersion: 2 });
    expect(cache.size).toBeGreaterThan(0);
    // Another worker (no shared cache) moves the note on twice.
    expect(await route(note('two', 1))).toMatchObject({ status: 'accepted', streamVersion: 3 });
    expect(await route(note('three', 2))).toMatchObject({ status: 'accepted', streamVersion: 4 });
    // The cached worker sees version 3 of the note, not the 1 it folded: a stale expectation is refused…
    expect(await cachedRoute(note('stale', 1))).toMatchObject({
      status: 'rejected',
      code: 'conflict',
      details: { currentValue: 'three', currentVersion: 3 },
    });
    // …and a current one goes through at the right stream version.
    expect(await cachedRoute(note('four', 3))).toMatchObject({ status: 'accepted', streamVersion: 5 });
  });
});
