import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderingStream } from '#events/streams.ts';
import { databaseBackends, runs } from '#tests/support/environment.ts';
import { addCompetitorCommand, envelope } from '#tests/support/runtime-pieces.ts';
import { readBoard } from '#tests/support/segment-board.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';
import type { TestClient } from '#tests/support/test-client.ts';

/**
 * Review of the ranking and the segment board as two editors use them at once: a page must never
 * offer a drop that silently undoes a colleague's move.
 */

type Answer = { status?: string; code?: string; message?: string };

const flat = (list: string[]) => list.map((value, i) => ({ order: i + 1, value }));
const grouped = (groups: { id: string; items: string[] }[]) =>
  groups.map((g, i) => ({ order: i + 1, value: g.id, items: flat(g.items) }));

describe.runIf(runs('postgres'))('the segment board while one read model is behind the other', () => {
  let app: TestApp;
  let editor: TestClient;
  let colleague: TestClient;

  beforeAll(async () => {
    app = await startTestApp('postgres', { demoData: false });
    editor = await app.client('editor');
    colleague = await app.client('admin');
    for (const name of ['Alpha', 'Bravo', 'Charlie']) {
      const command = addCompetitorCommand(name, { segmentId: 'enterprise' });
      expect((await app.runtime.route(envelope(command))).status).toBe('accepted');
    }
    await app.runtime.store.notifyAppended();
    const deadline = Date.now() + 10_000;
    while ((await readBoard(editor)).groups[0]?.items.length !== 3 && Date.now() < deadline) await sleep(20);
  });
  afterAll(async () => app?.close());

  it("a drop on a board whose segment order had not caught up is refused, not a revert of the colleague's move", async () => {
    const before = await readBoard(colleague);
    const order = before.groups.map((g) => g.id);
    expect(order).toEqual(['enterprise', 'mid-market', 'smb', 'emerging']);
    // The segment board's projection is held (as between the commits of two projections, or a busy
    // runner): the competitor list catches up with the colleague's move, the segment order does not.
    const holder = new pg.Client({ connectionString: app.db.url });
    await holder.connect();
    try {
      await holder.query(`SELECT pg_advisory_lock(hashtext('projection:segment-board'))`);
      const moved = [before.groups[2], before.groups[0], before.groups[1], before.groups[3]].map((g) => ({
        id: g?.id ?? '',
        items: g?.items ?? [],
      }));
      await colleague.get('/segments');
      const response = await colleague.postJson(
        '/components/segments',
        { method: 'reorganize', payload: grouped(moved), expect: { version: before.version } },
        { headers: { 'Idempotency-Key': crypto.randomUUID() } },
      );
      expect(((await response.json()) as Answer).status).toBe('accepted');

      // The editor's page now: whatever it shows, a drop made on it must not put SMB back.
      const stale = await readBoard(editor);
      const [first, ...rest] = stale.groups;
      const items = first?.items ?? [];
      const dropped = [{ id: first?.id ?? '', items: [...items].reverse() }, ...rest];
      const drop = await editor.postJson(
        '/components/segments',
        { method: 'reorganize', payload: grouped(dropped), expect: { version: stale.version } },
        { headers: { 'Idempotency-Key': crypto.randomUUID() } },
      );
      const answer = (await drop.json()) as Answer;
      const { events } = await app.runtime.store.readStream(orderingStream());
      const reorders = events.filter((e) => e.type === 'SegmentsReordered');
      // Either the page already showed SMB first, or the drop was refused as stale: never a second
      // SegmentsReordered that undoes the first.
      expect({ status: answer.status, reorders: reorders.length }).not.toEqual({
        status: 'accepted',
        reorders: 2,
      });
      if (stale.groups[0]?.id === 'enterprise') {
        expect(drop.status).toBe(409);
        expect(answer.message).toMatch(/moved the segment SMB from 3 to 1 after you loaded this list/);
      }
    } finally {
      await holder.query(`SELECT pg_advisory_unlock_all()`);
      await holder.end();
    }
    // Once the board has caught up, it shows the move and its drops are saved again.
    const deadline = Date.now() + 10_000;
    let now = await readBoard(editor);
    while (now.groups[0]?.id !== 'smb' && Date.now() < deadline) {
      await sleep(50);
      now = await readBoard(editor);
    }
    expect(now.groups.map((g) => g.id)).toEqual(['smb', 'enterprise', 'mid-market', 'emerging']);
    const enterprise = now.groups[1];
    const drop = await editor.postJson(
      '/components/segments',
      {
        method: 'reorganize',
        payload: grouped(
          now.groups.map((g) => (g === enterprise ? { id: g.id, items: [...g.items].reverse() } : g)),
        ),
        expect: { version: now.version },
      },
      { headers: { 'Idempotency-Key': crypto.randomUUID() } },
    );
    expect(((await drop.json()) as Answer).status).toBe('accepted');
  });

  it("the ranking's order and its version come from one moment: a drop on it never undoes a move it did not show", async () => {
    const ranking = async (client: TestClient) => {
      const html = await (await client.get('/ranking')).text();
      const section = /<section id="ranking-region"[^>]*>/.exec(html)?.[0] ?? '';
      return {
        version: Number(/data-version="(\d+)"/.exec(section)?.[1] ?? 'NaN'),
        ids: [...html.matchAll(/<li class="sortable-item" data-id="([^"]+)"/g)].map((m) => m[1] as string),
      };
    };
    const before = await ranking(colleague);
    // The page's two reads are pulled apart: the colleague's move commits (and is projected) after the
    // page read the order and before it read the version (a commit landing between two statements).
    const pool = app.db.pool as unknown as { query: (...args: unknown[]) => Promise<unknown> };
    const original = pool.query.bind(pool);
    let rowsRead!: () => void;
    const rowsDone = new Promise<void>((resolve) => (rowsRead = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    pool.query = async (...args: unknown[]) => {
      const text = typeof args[0] === 'string' ? args[0] : '';
      if (text.includes('FROM competitor_list ORDER BY rank, id LIMIT') && !held) {
        const result = await original(...args);
        rowsRead();
        return result;
      }
      // Only the editor's page waits (the first read); everyone else reads as usual.
      if (text === 'SELECT version FROM competitor_list_order' && !held) {
        held = true;
        await gate;
      }
      return original(...args);
    };
    try {
      const page = ranking(editor);
      await Promise.race([rowsDone, page]);
      const moved = [before.ids[2] as string, ...before.ids.filter((_, i) => i !== 2)];
      await colleague.get('/ranking');
      const response = await colleague.postJson(
        '/components/ranking',
        { method: 'reorder', payload: flat(moved), expect: { version: before.version } },
        { headers: { 'Idempotency-Key': crypto.randomUUID() } },
      );
      expect(((await response.json()) as Answer).status).toBe('accepted');
      release();
      const seen = await page;
      pool.query = original;
      // The editor drags on what the page showed: swaps the last two.
      const dropped = [...seen.ids.slice(0, -2), seen.ids.at(-1) as string, seen.ids.at(-2) as string];
      const drop = await editor.postJson(
        '/components/ranking',
        { method: 'reorder', payload: flat(dropped), expect: { version: seen.version } },
        { headers: { 'Idempotency-Key': crypto.randomUUID() } },
      );
      const answer = (await drop.json()) as Answer;
      const after = await ranking(colleague);
      // The colleague's move stays first, whatever happened to the drop.
      expect(after.ids[0]).toBe(moved[0]);
      if (seen.ids[0] !== moved[0]) expect([drop.status, answer.code]).toEqual([409, 'conflict']);
    } finally {
      release();
      pool.query = original;
    }
  });
});

describe.each(databaseBackends)('the "as of" battlecard on %s', (backend) => {
  let app: TestApp;
  let editor: TestClient;
  let id = '';

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: false });
    editor = await app.client('editor');
    const command = addCompetitorCommand('Zulu Analytics', { segmentId: 'enterprise' });
    expect((await app.runtime.route(envelope(command))).status).toBe('accepted');
    id = command.payload.competitorId;
    await app.runtime.store.notifyAppended();
    const deadline = Date.now() + 10_000;
    while (!(await readBoard(editor)).groups[0]?.items.includes(id) && Date.now() < deadline) await sleep(20);
  });
  afterAll(async () => app?.close());

  it('shows the segment the board moved the competitor to, and no made-up rank', async () => {
    const board = await readBoard(editor);
    const payload = board.groups.map((g) => ({
      id: g.id,
      items: g.id === 'smb' ? [...g.items, id] : g.items.filter((i) => i !== id),
    }));
    const moved = await editor.postJson(
      '/components/segments',
      { method: 'reorganize', payload: grouped(payload), expect: { version: board.version } },
      { headers: { 'Idempotency-Key': crypto.randomUUID() } },
    );
    expect(((await moved.json()) as Answer).status).toBe('accepted');
    const fact = (html: string, label: string) =>
      new RegExp(`<dt>${label}</dt><dd>([^<]*)</dd>`).exec(html)?.[1];
    const live = await (await editor.get(`/competitors/${id}`)).text();
    expect(fact(live, 'Segment')).toBe('SMB');
    // A moment after the move, once it has passed (a moment still to come shows the card as it is now,
    // under its own banner; a second is read through its end, docs/decisions/0025): the card as it was then
    // is the card as it is now.
    const moment = Math.ceil((Date.now() + 1) / 1000) * 1000;
    await sleep(moment + 1000 - Date.now() + 50);
    const later = new Date(moment).toISOString().slice(0, 19);
    const asOf = await (await editor.get(`/competitors/${id}/history?asOf=${later}`)).text();
    expect(asOf).toContain('Historical view');
    expect(fact(asOf, 'Segment')).toBe('SMB');
    expect(fact(asOf, 'Rank')).toBe('—');
  });
});

describe('the note history of a long, often rewritten note', () => {
  let app: TestApp;
  let editor: TestClient;
  let id = '';
  const VERSIONS = 30;
  // Two unrelated notes of 1,000 words (about 4,000 characters, well within the 10,000 allowed).
  const note = (seed: number) => Array.from({ length: 1_000 }, (_, i) => `w${(i * seed) % 97}`).join(' ');

  beforeAll(async () => {
    app = await startTestApp('embedded', { demoData: false });
    editor = await app.client('editor');
    const command = addCompetitorCommand('Yankee Metrics');
    expect((await app.runtime.route(envelope(command))).status).toBe('accepted');
    id = command.payload.competitorId;
    for (let v = 1; v <= VERSIONS; v++) {
      const value = note(v % 2 === 0 ? 7 : 11);
      const saved = await app.runtime.route(
        envelope({ type: 'UpdateCompetitorNote', payload: { competitorId: id, column: 'general', value } }),
      );
      expect(saved.status).toBe('accepted');
    }
    await app.runtime.store.notifyAppended();
    const deadline = Date.now() + 20_000;
    const count = async () =>
      (
        await app.db.pool.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM note_history WHERE competitor_id = $1',
          [id],
        )
      ).rows[0]?.n ?? 0;
    while ((await count()) < VERSIONS && Date.now() < deadline) await sleep(50);
  }, 120_000);
  afterAll(async () => app?.close());

  it('compares words within one budget per page: the newest changes word by word, older ones whole', async () => {
    const html = await (await editor.get(`/competitors/${id}/history?perPage=50`)).text();
    const entries = [...html.matchAll(/data-history-entry="general:(\d+)"[\s\S]*?<\/li>/g)];
    expect(entries).toHaveLength(VERSIONS);
    const marks = (entry: string) => (entry.match(/<(ins|del)>/g) ?? []).length;
    // The newest version (first) is a word diff: many small marks.
    expect(marks(entries[0]?.[0] ?? '')).toBeGreaterThan(2);
    // The page does not compare every pair of 1,000-word versions (each ~4 million token pairs): the
    // oldest rewrites are shown as the old text removed and the new one added.
    expect(marks(entries.at(-2)?.[0] ?? '')).toBe(2);
  });

  it('is paged like the tables: 15 newest first, the rest on later pages, a page past the end shows the last', async () => {
    const entriesOf = async (query: string) => {
      const response = await editor.get(`/competitors/${id}/history${query}`);
      expect(response.status).toBe(200);
      const html = await response.text();
      return {
        html,
        versions: [...html.matchAll(/data-history-entry="general:(\d+)"/g)].map((m) => Number(m[1])),
      };
    };
    const newest = Array.from({ length: 15 }, (_, i) => VERSIONS - i);
    const oldest = Array.from({ length: 15 }, (_, i) => 15 - i);
    const first = await entriesOf('');
    expect(first.versions).toEqual(newest);
    expect(first.html).toContain('1–15 of 30 changes, newest first');
    // The links keep the filter and the page size.
    expect(first.html).toContain(`href="/competitors/${id}/history?page=2&amp;perPage=15"`);
    const second = await entriesOf('?page=2');
    expect(second.versions).toEqual(oldest);
    expect(second.html).toContain('16–30 of 30 changes, newest first');
    expect((await entriesOf('?column=general&page=99')).versions).toEqual(oldest);
    expect((await entriesOf('?column=general&page=99')).html).toContain(
      `href="/competitors/${id}/history?column=general&amp;page=1&amp;perPage=15"`,
    );
    expect((await entriesOf('?page=abc&perPage=10')).versions).toEqual(newest.slice(0, 10));
    expect((await entriesOf('?column=pricing')).versions).toEqual([]);
  });
});
