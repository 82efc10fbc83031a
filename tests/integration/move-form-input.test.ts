import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseBackends } from '#tests/support/environment.ts';
import { addRankedCompetitors, readBoard, readRanking } from '#tests/support/segment-board.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';
import type { TestClient } from '#tests/support/test-client.ts';

/**
 * The move buttons' form (`/ranking/move`, `/segments/move`) as a careless or hostile client sends it:
 * a version of the wrong type, a field twice, a competitor or segment that is not listed any more.
 */

const NAMES = ['Alpha', 'Bravo', 'Charlie', 'Delta'];

describe.each(databaseBackends)('the move form on %s', (backend) => {
  let app: TestApp;
  let editor: TestClient;
  let admin: TestClient;
  const ids: string[] = [];

  const eventCount = async () =>
    (await app.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]?.n ?? -1;

  const ranking = () => readRanking(editor);

  /** The notice on the page a form's redirect lands on. */
  const noticeAfter = async (response: Response) => {
    expect(response.status).toBe(302);
    const html = await (await editor.get(response.headers.get('location') ?? '/')).text();
    return /class="flash flash--[^"]*"[^>]*>([^<]*)</.exec(html)?.[1] ?? '';
  };

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: false });
    editor = await app.client('editor');
    admin = await app.client('admin');
    ids.push(...(await addRankedCompetitors(app, editor, NAMES, () => 'enterprise')));
  });
  afterAll(async () => app?.close());

  // First, while the ranking was never reordered (version 0): a wrong-type version read as 0 moved it.
  it('a version of the wrong type (JSON null, false, [], true; a form’s 0x10 or 1e0) is refused, and nothing moves', async () => {
    const before = await ranking();
    expect(before.version).toBe(0);
    const events = await eventCount();
    const move = `${before.ids[1]}:up`;
    for (const expectValue of [null, false, [], true, {}]) {
      await editor.get('/ranking');
      const response = await editor.postJson('/ranking/move', { move, expect: expectValue });
      expect(response.status, JSON.stringify(expectValue)).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
        /not as text|out of date/,
      );
    }
    for (const expectValue of ['0x0', '0x10', '1e0', '0b0', '+0', '0.0']) {
      await editor.get('/ranking');
      const response = await editor.postForm('/ranking/move', { move, expect: expectValue });
      expect(response.status, expectValue).toBe(400);
      expect(await response.text()).toContain('This page is out of date. Reload it and move again.');
    }
    expect(await eventCount()).toBe(events);
    expect((await ranking()).ids).toEqual(before.ids);
    // The same move with the page's version (a form's digits, or a JSON number) goes through.
    await editor.get('/ranking');
    expect(await noticeAfter(await editor.postJson('/ranking/move', { move, expect: 0 }))).toMatch(/^Moved /);
    const after = await ranking();
    expect(after.ids).toEqual([before.ids[1], before.ids[0], ...before.ids.slice(2)]);
    expect(
      await noticeAfter(await editor.postForm('/ranking/move', { move, expect: ` ${after.version} ` })),
    ).toMatch(/cannot move further/);
  });

  it('a field sent twice is refused by name, not as “expected string, received array” or an out-of-date page', async () => {
    const before = await ranking();
    const board = await readBoard(editor);
    const events = await eventCount();
    const version = String(before.version);
    const move = `${before.ids[1]}:down`;
    for (const [path, fields, named] of [
      [
        '/ranking/move',
        [
          ['move', move],
          ['move', move],
          ['expect', version],
        ],
        '“move”',
      ],
      [
        '/ranking/move',
        [
          ['move', move],
          ['expect', version],
          ['expect', version],
        ],
        '“expect”',
      ],
      [
        '/segments/move',
        [
          ['segment', 'smb:up'],
          ['segment', 'smb:up'],
          ['expect', String(board.version)],
        ],
        '“segment”',
      ],
      [
        '/segments/move',
        [
          ['move', move],
          ['expect', '0'],
          ['expect', '1'],
        ],
        '“expect”',
      ],
    ] as const) {
      await editor.get('/ranking');
      const response = await editor.postForm(
        path,
        fields.map(([k, v]) => [k, v] as [string, string]),
      );
      expect(response.status, `${path} ${named}`).toBe(400);
      const text = await response.text();
      expect(text).toContain(`came more than once (or not as text), so nothing was moved`);
      expect(text).toContain(named);
    }
    await editor.get('/ranking');
    const json = await editor.postJson('/ranking/move', { move: [move], expect: before.version });
    expect(json.status).toBe(400);
    expect(((await json.json()) as { error: { message: string } }).error.message).toMatch(
      /“move” came more than once \(or not as text\)/,
    );
    expect(await eventCount()).toBe(events);
  });

  it('moving a competitor deleted meanwhile (or a segment that is not on the board) says so, not “cannot move further that way”', async () => {
    const { ids: listed } = await ranking();
    const gone = listed[1] as string;
    await admin.get('/competitors');
    const deleted = await admin.postForm(`/competitors/${gone}/delete`, { _idempotency_key: randomUUID() });
    expect(deleted.status).toBe(302);
    const deadline = Date.now() + 10_000;
    while ((await ranking()).ids.includes(gone) && Date.now() < deadline) await sleep(20);
    const now = await ranking();
    expect(now.ids).not.toContain(gone);
    const events = await eventCount();

    for (const direction of ['up', 'down']) {
      await editor.get('/ranking');
      const fields = {
        move: `${gone}:${direction}`,
        expect: String(now.version),
        _idempotency_key: randomUUID(),
      };
      expect(await noticeAfter(await editor.postForm('/ranking/move', fields))).toMatch(
        /^The competitor you moved is not in the ranking any more \(it was deleted, or never existed\)\./,
      );
    }
    const board = await readBoard(editor);
    await editor.get('/segments');
    expect(
      await noticeAfter(
        await editor.postForm('/segments/move', { move: `${gone}:up`, expect: String(board.version) }),
      ),
    ).toMatch(/^The competitor you moved is not in the board any more/);
    expect(
      await noticeAfter(
        await editor.postForm('/segments/move', {
          segment: 'no-such-segment:up',
          expect: String(board.version),
        }),
      ),
    ).toMatch(/^The segment you moved is not in the board any more/);
    // A listed one at the end is still told it cannot move further.
    await editor.get('/ranking');
    expect(
      await noticeAfter(
        await editor.postForm('/ranking/move', { move: `${now.ids[0]}:up`, expect: String(now.version) }),
      ),
    ).toMatch(/cannot move further that way/);
    expect(await eventCount()).toBe(events);
  });
});
