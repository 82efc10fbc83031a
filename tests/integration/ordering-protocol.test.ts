import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventRegistry } from '#events/all-events.ts';
import { createEventStore } from '#events/store/event-store.ts';
import { orderingStream } from '#events/streams.ts';
import { competitorListProjection } from '#projections/competitor-list/competitor-list.projection.ts';
import { segmentBoardProjection } from '#projections/segment-board/segment-board.projection.ts';
import { rebuildProjections } from '#projections/rebuild/rebuild.ts';
import { withOrdering } from '#services/ordering/reorder.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';
import type { TestClient } from '#tests/support/test-client.ts';
import { addRankedCompetitors, readBoard, readRanking } from '#tests/support/segment-board.ts';
import { waitUntilLogSettled } from '#tests/support/settled-log.ts';

/**
 * Drag-sorting through the real app (HTTP, sessions, CSRF, bus, worker, projections): the `ranking`
 * and `segments` components' methods, every refusal, the no-JavaScript move buttons, and concurrent
 * drops on one version.
 */

type Answer = {
  status?: string;
  code?: string;
  message?: string;
  visible?: boolean;
  error?: { message?: string };
};

const NAMES = ['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo', 'Foxtrot'];

describe.each(databaseBackends)('drag-sorting on %s', (backend) => {
  let app: TestApp;
  let editor: TestClient;
  let viewer: TestClient;
  const ids: string[] = [];

  const eventCount = async () =>
    (await app.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]?.n ?? -1;

  /** The ranking as the page shows it: ids in order, and the version it would `expect`. */
  const ranking = (client: TestClient = editor) => readRanking(client);

  const board = (client: TestClient = editor) => readBoard(client);

  async function call(client: TestClient, component: string, body: unknown) {
    await client.get('/ranking');
    const response = await client.postJson(`/components/${component}`, body);
    return { status: response.status, answer: (await response.json()) as Answer };
  }

  const flat = (list: string[]) => list.map((value, i) => ({ order: i + 1, value }));
  const grouped = (groups: { id: string; items: string[] }[]) =>
    groups.map((g, i) => ({ order: i + 1, value: g.id, items: flat(g.items) }));

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: false });
    editor = await app.client('editor');
    viewer = await app.client('viewer');
    ids.push(
      ...(await addRankedCompetitors(app, editor, NAMES, (name) => (name < 'D' ? 'enterprise' : 'smb'))),
    );
  });
  afterAll(async () => app?.close());

  // First, while neither the ranking nor the board was ever reordered (version 0).
  it('a move form with an empty expect is refused like one without it, even at version 0; one naming both a competitor and a segment is refused', async () => {
    const before = await ranking();
    const boardBefore = await board();
    expect([before.version, boardBefore.version]).toEqual([0, 0]);
    const events = await eventCount();
    const stale = 'This page is out of date. Reload it and move again.';
    for (const [path, fields] of [
      ['/ranking/move', { move: `${before.ids[1]}:up` }],
      ['/segments/move', { move: `${before.ids[1]}:up` }],
      ['/segments/move', { segment: 'smb:up' }],
    ] as const) {
      for (const empty of ['', ' ']) {
        await editor.get('/ranking');
        const response = await editor.postForm(path, { ...fields, expect: empty });
        expect(response.status, `${path} ${JSON.stringify(fields)}`).toBe(400);
        expect(await response.text()).toContain(stale);
      }
    }
    await editor.get('/segments');
    const both = await editor.postForm('/segments/move', {
      move: `${before.ids[1]}:down`,
      segment: 'smb:up',
      expect: '0',
    });
    expect(both.status).toBe(400);
    expect(await both.text()).toContain('names both a competitor (move) and a segment (segment)');
    expect(await eventCount()).toBe(events);
    expect((await ranking()).ids).toEqual(before.ids);
  });

  it('a ranking drop goes through `reorder`, records one move, and the next read shows it', async () => {
    const before = await ranking();
    expect(before.ids).toEqual(ids);
    const dropped = [before.ids[3] as string, ...before.ids.filter((_, i) => i !== 3)];
    const count = await eventCount();
    const { status, answer } = await call(editor, 'ranking', {
      method: 'reorder',
      payload: flat(dropped),
      expect: { version: before.version },
    });
    expect(status).toBe(200);
    expect(answer).toMatchObject({ status: 'accepted', visible: true });
    expect(await eventCount()).toBe(count + 1);
    const { events } = await app.runtime.store.readStream(orderingStream());
    expect(events.at(-1)).toMatchObject({
      type: 'CompetitorRankChanged',
      data: { competitorId: ids[3], name: 'Delta', from: 4, to: 1 },
      metadata: { actor: { name: 'Test editor' } },
    });
    const after = await ranking();
    expect(after.ids).toEqual(dropped);
    expect(after.version).toBe(before.version + 1);
    // The table's rank column, the battlecard and the audit log follow.
    const table = await (await editor.get('/competitors?sort=rank:asc&page=1&perPage=10&search=')).text();
    expect(table.indexOf('Delta')).toBeLessThan(table.indexOf('Alpha'));
    const audit = await (await editor.get('/audit?search=Delta&page=1&perPage=10&sort=')).text();
    expect(audit).toContain('Moved Delta in the ranking from #4 to #1');
  });

  it('a drop that changes nothing records nothing', async () => {
    const now = await ranking();
    const count = await eventCount();
    const { status, answer } = await call(editor, 'ranking', {
      method: 'reorder',
      payload: flat(now.ids),
      expect: { version: now.version },
    });
    expect([status, answer.status]).toEqual([200, 'accepted']);
    expect(await eventCount()).toBe(count);
  });

  it.each([
    [
      'a wrong type',
      (l: string[]) => l.map((value, i) => ({ order: String(i + 1), value })),
      400,
      /whole number/,
    ],
    [
      'a duplicated id',
      (l: string[]) => flat([l[0] as string, ...l.slice(0, -1)]),
      400,
      /appears more than once/,
    ],
    ['a missing id', (l: string[]) => flat(l.slice(1)), 400, /missing a competitor/],
    [
      'an unknown id',
      (l: string[]) => flat([...l.slice(1), '00000000-0000-4000-8000-000000000000']),
      400,
      /not in the ranking/,
    ],
    [
      'a gap in the orders',
      (l: string[]) => l.map((value, i) => ({ order: i + 2, value })),
      400,
      /order 1 is missing/,
    ],
  ])('refuses %s with a readable message and changes nothing', async (_, make, code, message) => {
    const now = await ranking();
    const count = await eventCount();
    const { status, answer } = await call(editor, 'ranking', {
      method: 'reorder',
      payload: make(now.ids),
      expect: { version: now.version },
    });
    expect(status).toBe(code);
    expect(answer.message ?? answer.error?.message).toMatch(message);
    expect(await eventCount()).toBe(count);
  });

  it('refuses a stale drop, saying who moved what', async () => {
    const now = await ranking();
    const count = await eventCount();
    const { status, answer } = await call(editor, 'ranking', {
      method: 'reorder',
      payload: flat([...now.ids].reverse()),
      expect: { version: now.version - 1 },
    });
    expect(status).toBe(409);
    expect(answer.message).toMatch(/^Test editor moved Delta from #4 to #1 after you loaded this list/);
    expect(await eventCount()).toBe(count);
  });

  it('a viewer sees no handles and a forged call is refused', async () => {
    const page = await ranking(viewer);
    expect(page.ids.length).toBe(NAMES.length);
    expect(page.html).not.toContain('data-drag-handle');
    expect(page.html).not.toContain('data-can-sort');
    expect((await board(viewer)).html).not.toContain('data-drag-handle');
    const count = await eventCount();
    const { status } = await call(viewer, 'ranking', {
      method: 'reorder',
      payload: flat([...page.ids].reverse()),
      expect: { version: page.version },
    });
    expect(status).toBe(403);
    const moved = await viewer.postForm('/ranking/move', {
      move: `${page.ids[1]}:up`,
      expect: String(page.version),
    });
    expect(moved.status).toBe(403);
    expect(await eventCount()).toBe(count);
  });

  it('the board: moving within and between segments and moving a segment, in one drop', async () => {
    const before = await board();
    expect(before.groups.map((g) => g.id)).toEqual(['enterprise', 'mid-market', 'smb', 'emerging']);
    const [enterprise, midMarket, smb, emerging] = before.groups as [
      (typeof before.groups)[0],
      (typeof before.groups)[0],
      (typeof before.groups)[0],
      (typeof before.groups)[0],
    ];
    const moving = enterprise.items[0] as string;
    const dropped = [
      { id: 'emerging', items: [moving] },
      { id: 'enterprise', items: [...enterprise.items.slice(1)].reverse() },
      midMarket,
      smb,
    ];
    expect(emerging.items).toEqual([]);
    const { status, answer } = await call(editor, 'segments', {
      method: 'reorganize',
      payload: grouped(dropped),
      expect: { version: before.version },
    });
    expect([status, answer.status]).toEqual([200, 'accepted']);
    const after = await board();
    expect(after.groups).toEqual(dropped);
    expect(after.version).toBeGreaterThan(before.version);
    const card = await (await editor.get(`/competitors/${moving}`)).text();
    expect(card).toContain('Emerging');
  });

  it('without JavaScript: move buttons submit a form and land on the same page', async () => {
    const before = await ranking();
    const noToken = await editor.postForm(
      '/ranking/move',
      { move: `${before.ids[2]}:up`, expect: String(before.version) },
      { csrf: false },
    );
    expect(noToken.status).toBe(403);
    await editor.get('/ranking');
    const response = await editor.postForm('/ranking/move', {
      move: `${before.ids[2]}:up`,
      expect: String(before.version),
    });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/ranking');
    const after = await ranking();
    expect(after.ids).toEqual([before.ids[0], before.ids[2], before.ids[1], ...before.ids.slice(3)]);

    const boardBefore = await board();
    await editor.postForm('/segments/move', { segment: 'smb:up', expect: String(boardBefore.version) });
    expect((await board()).groups.map((g) => g.id).indexOf('smb')).toBe(
      boardBefore.groups.map((g) => g.id).indexOf('smb') - 1,
    );
  });

  it('a move button sent again after its click moved the item to the end (a resubmission, a double click) says moved, and moved it once', async () => {
    /** The notice the page after a form's redirect shows. */
    const noticeAfter = async (response: Response) => {
      const html = await (await editor.get(response.headers.get('location') ?? '/')).text();
      return /class="flash flash--[^"]*"[^>]*>([^<]*)</.exec(html)?.[1] ?? '';
    };
    const before = await ranking();
    const second = before.ids[1] as string;
    const click = { move: `${second}:up`, expect: String(before.version), _idempotency_key: randomUUID() };
    const first = await editor.postForm('/ranking/move', click);
    expect(await noticeAfter(first)).toMatch(/^Moved /);
    const events = await eventCount();
    // The answer was lost: the browser sends the same form again. The competitor is at the top now.
    const again = await editor.postForm('/ranking/move', click);
    expect(await noticeAfter(again)).toMatch(/^Moved /);
    expect((await ranking()).ids).toEqual([second, before.ids[0], ...before.ids.slice(2)]);
    expect(await eventCount()).toBe(events);

    // A segment moved to the last place, its click sent again.
    const board0 = await board();
    const ids0 = board0.groups.map((g) => g.id);
    const last = ids0.at(-2) as string;
    const down = { segment: `${last}:down`, expect: String(board0.version), _idempotency_key: randomUUID() };
    expect(await noticeAfter(await editor.postForm('/segments/move', down))).toMatch(/^Moved the segment /);
    expect(await noticeAfter(await editor.postForm('/segments/move', down))).toMatch(/^Moved the segment /);
    expect((await board()).groups.map((g) => g.id)).toEqual([...ids0.slice(0, -2), ids0.at(-1), last]);

    // A new click (a fresh key) on the top competitor's Move up is still told it cannot move.
    const top = await ranking();
    const fresh = { move: `${top.ids[0]}:up`, expect: String(top.version), _idempotency_key: randomUUID() };
    expect(await noticeAfter(await editor.postForm('/ranking/move', fresh))).toMatch(/cannot move further/);
  });

  it('20 concurrent drops on one version: exactly one accepted per version; the result equals a replay', async () => {
    for (let round = 0; round < 3; round++) {
      const now = await ranking();
      await editor.get('/ranking');
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => {
          const list = [...now.ids];
          const [moved] = list.splice(i % list.length, 1);
          list.splice((i * 7 + round) % list.length, 0, moved as string);
          if (list.join() === now.ids.join()) list.reverse();
          return editor
            .postJson('/components/ranking', {
              method: 'reorder',
              payload: flat(list),
              expect: { version: now.version },
            })
            .then(async (r) => ({ status: r.status, body: (await r.json()) as Answer }));
        }),
      );
      expect(answers.filter((a) => a.body.status === 'accepted')).toHaveLength(1);
      expect(answers.filter((a) => a.status === 409)).toHaveLength(19);
    }
    // The live read models equal a rebuild from the log, and the decider's own fold agrees with them.
    const summaries = await rebuildProjections(
      app.db,
      app.runtime.store,
      [competitorListProjection, segmentBoardProjection],
      { batchSize: 4, dryRun: true },
    );
    expect(summaries.map((s) => s.differences)).toEqual([0, 0]);
    await waitUntilLogSettled(app.db.pool);
    const fresh = createEventStore(app.db.pool, eventRegistry);
    const folded = await withOrdering(fresh, (state) => state.ranking);
    expect(folded).toEqual((await ranking()).ids);
  });
});
