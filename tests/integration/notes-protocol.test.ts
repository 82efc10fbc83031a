import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { competitorStream } from '#events/streams.ts';
import { formatTime } from '#web/components/format.ts';
import { TIME_ZONE_COOKIE } from '#web/components/time-zone.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { addCompetitorCommand, envelope } from '#tests/support/runtime-pieces.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';
import type { RequestOptions, TestClient } from '#tests/support/test-client.ts';

/**
 * The `update-note` event through the component protocol, against the real app (HTTP, sessions, CSRF,
 * command worker, projections): what an accepted call answers and that the next read shows it, and every
 * way a call is refused, each with its status, a message a person can read, and no event appended.
 */

const NOTES = '/components/competitor-notes';

type Answer = {
  status?: string;
  code?: string;
  message?: string;
  position?: unknown;
  transactionId?: unknown;
  visible?: unknown;
  fields?: Record<string, string>;
  details?: Record<string, unknown>;
  error?: { code?: string; message?: string };
  html?: string;
};

const updateNote = (payload: unknown, expectVersion?: number) => ({
  event: 'update-note',
  payload,
  ...(expectVersion === undefined ? {} : { expect: { version: expectVersion } }),
});

/** Both answer shapes (a rejected decision, or an error thrown before it) carry a readable message. */
const messageOf = (answer: Answer) => answer.message ?? answer.error?.message ?? '';

/** The text of an HTML error page's main content. */
const readableText = (html: string) =>
  (/<main[^>]*>([\s\S]*)<\/main>/.exec(html)?.[1] ?? '').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

describe.each(databaseBackends)('notes component protocol on %s', (backend) => {
  let app: TestApp;
  let editor: TestClient;
  let viewer: TestClient;
  let admin: TestClient;

  const eventCount = async () =>
    (await app.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]?.n ?? -1;

  async function noteEvents(competitorId: string) {
    const { events } = await app.runtime.store.readStream(competitorStream(competitorId));
    return events.filter((e) => e.type === 'CompetitorNoteUpdated');
  }

  /** A fresh competitor (so tests do not share note versions), visible in the list. */
  async function newCompetitor(name = `Protocol ${randomUUID().slice(0, 8)}`): Promise<string> {
    const command = addCompetitorCommand(name);
    const outcome = await app.runtime.route(envelope(command));
    expect(outcome.status).toBe('accepted');
    const id = command.payload.competitorId;
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const { rows } = await app.db.pool.query('SELECT 1 FROM competitor_list WHERE id = $1', [id]);
      if (rows.length > 0) return id;
      await sleep(20);
    }
    throw new Error(`${name} did not appear in the list`);
  }

  async function call(client: TestClient, body: unknown, options?: RequestOptions, path = NOTES) {
    // Refresh the CSRF token from a page, as the browser would have it.
    await client.get('/competitors');
    const response = await client.postJson(path, body, options);
    const text = await response.text();
    // JSON for calls that say they are XHR; the error page (HTML) for one that does not.
    const answer = (
      (response.headers.get('content-type') ?? '').includes('application/json')
        ? JSON.parse(text)
        : { html: text }
    ) as Answer;
    return { status: response.status, answer, response };
  }

  /** Sends a call that must be refused: checks status, message, and that no event was appended. */
  async function expectRejected(
    send: () => Promise<{ status: number; answer: Answer }>,
    status: number,
    message?: string | RegExp,
  ): Promise<Answer> {
    const before = await eventCount();
    const { status: actual, answer } = await send();
    expect(actual).toBe(status);
    expect(answer.status).not.toBe('accepted');
    const text = answer.html === undefined ? messageOf(answer) : readableText(answer.html);
    expect(text).toMatch(/\S/);
    if (typeof message === 'string' && answer.html !== undefined) expect(text).toContain(message);
    else if (typeof message === 'string') expect(text).toBe(message);
    else if (message) expect(text).toMatch(message);
    expect(await eventCount()).toBe(before);
    return answer;
  }

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: false });
    editor = await app.client('editor');
    viewer = await app.client('viewer');
    admin = await app.client('admin');
  });
  afterAll(async () => app?.close());

  it('accepts a note: answers with the event position, and the very next read shows it', async () => {
    const id = await newCompetitor();
    const value = `Per seat pricing ${randomUUID()}\nwith <annual> "billing" & more`;
    const before = await eventCount();
    const { status, answer } = await call(
      editor,
      updateNote({ competitorId: id, column: 'pricing', value }, 0),
    );
    expect(status).toBe(200);
    expect(answer.status).toBe('accepted');
    expect(typeof answer.position).toBe('number');
    expect(typeof answer.transactionId).toBe('string');
    expect(answer.visible).toBe(true);
    expect(await eventCount()).toBe(before + 1);

    // The event at that position is the note update, by the signed-in user.
    const events = await noteEvents(id);
    expect(events).toHaveLength(1);
    expect(events[0]?.position).toBe(answer.position);
    expect(events[0]?.data).toEqual({ competitorId: id, column: 'pricing', value, noteVersion: 1 });
    expect(events[0]?.metadata.actor).toEqual({ id: app.userIds.editor, name: 'Test editor' });

    // Read-your-writes: no waiting, the battlecard and the history already have it.
    const card = await (await editor.get(`/competitors/${id}`)).text();
    expect(card).toContain(escapeHtml(value));
    expect(card).toMatch(/Last edited by (<!-- -->)?Test editor/);
    const history = await (await editor.get(`/competitors/${id}/history?column=pricing`)).text();
    expect(history).toContain('data-history-entry="pricing:1"');

    // The next version goes on from there; without `expect` the last write wins.
    const second = await call(
      editor,
      updateNote({ competitorId: id, column: 'pricing', value: 'Flat fee' }, 1),
    );
    expect(second.status).toBe(200);
    expect(second.answer.status).toBe('accepted');
    expect(second.answer.position).toBeGreaterThan(answer.position as number);
    const third = await call(admin, updateNote({ competitorId: id, column: 'pricing', value: 'Free' }));
    expect(third.answer.status).toBe('accepted');
    expect((await noteEvents(id)).map((e) => (e.data as { noteVersion: number }).noteVersion)).toEqual([
      1, 2, 3,
    ]);
  });

  it('accepts exactly 10,000 characters, and saving the same text again appends nothing', async () => {
    const id = await newCompetitor();
    const value = 'x'.repeat(10_000);
    const first = await call(editor, updateNote({ competitorId: id, column: 'general', value }, 0));
    expect(first.status).toBe(200);
    expect(first.answer.status).toBe('accepted');
    const before = await eventCount();
    const again = await call(editor, updateNote({ competitorId: id, column: 'general', value }, 1));
    expect(again.status).toBe(200);
    expect(again.answer).toMatchObject({ status: 'accepted', position: null });
    expect(await eventCount()).toBe(before);
  });

  it('refuses empty and whitespace-only values with "Value is required!"', async () => {
    const id = await newCompetitor();
    for (const value of ['', ' ', '  \n\t  ']) {
      const answer = await expectRejected(
        () => call(editor, updateNote({ competitorId: id, column: 'strengths', value }, 0)),
        400,
        'Value is required!',
      );
      expect(answer).toMatchObject({ status: 'rejected', code: 'validation' });
      expect(answer.fields?.value).toBe('Value is required!');
    }
    expect(await noteEvents(id)).toEqual([]);
  });

  it('refuses text-direction controls in a note, saying nothing was saved; right-to-left text is accepted', async () => {
    // A note shows in its cell, its history and a conflict's "their text": U+202E there reversed what
    // followed it, as in a competitor's or a user's name (which already refuse them).
    const id = await newCompetitor();
    const message =
      'A note cannot contain text-direction controls (such as U+202E, right-to-left override): they make the text around it read differently from what it is. Nothing was saved.';
    for (const control of [
      '\u202a',
      '\u202b',
      '\u202c',
      '\u202d',
      '\u202e',
      '\u2066',
      '\u2067',
      '\u2068',
      '\u2069',
    ]) {
      const answer = await expectRejected(
        () =>
          call(
            editor,
            updateNote({ competitorId: id, column: 'general', value: `Price 10${control}05 EUR` }, 0),
          ),
        400,
        message,
      );
      expect(answer).toMatchObject({ status: 'rejected', code: 'validation' });
      expect(answer.fields?.value).toBe(message);
    }
    expect(await noteEvents(id)).toEqual([]);
    // Right-to-left letters and the marks U+200E/U+200F write right-to-left text without reordering it.
    const accepted = await call(
      editor,
      updateNote({ competitorId: id, column: 'general', value: 'שלום \u200f(עברית)' }, 0),
    );
    expect(accepted.status).toBe(200);
    expect(accepted.answer.status).toBe('accepted');
  });

  it('refuses an unknown column, an extra payload key, a missing key and a value over 10,000 characters', async () => {
    const id = await newCompetitor();
    const column = await expectRejected(
      () => call(editor, updateNote({ competitorId: id, column: 'prices', value: 'x' })),
      400,
      'Column must be one of strengths, weaknesses, pricing, general.',
    );
    expect(column.fields?.column).toBe('Column must be one of strengths, weaknesses, pricing, general.');
    const extra = await expectRejected(
      () =>
        call(editor, updateNote({ competitorId: id, column: 'pricing', value: 'x', expectedNoteVersion: 0 })),
      400,
    );
    expect(extra.code).toBe('validation');
    expect(messageOf(extra)).toMatch(/expectedNoteVersion/);
    await expectRejected(() => call(editor, updateNote({ competitorId: id, column: 'pricing' })), 400);
    await expectRejected(
      () => call(editor, updateNote({ competitorId: id, column: 'pricing', value: 42 })),
      400,
    );
    await expectRejected(
      () => call(editor, updateNote({ competitorId: id, column: 'pricing', value: 'x'.repeat(10_001) })),
      400,
      'A note can be at most 10,000 characters.',
    );
    await expectRejected(
      () => call(editor, updateNote({ competitorId: 'not-a-uuid', column: 'pricing', value: 'x' })),
      400,
      'Unknown competitor.',
    );
    expect(await noteEvents(id)).toEqual([]);
  });

  it('refuses a malformed envelope', async () => {
    const id = await newCompetitor();
    const payload = { competitorId: id, column: 'pricing', value: 'x' };
    await expectRejected(() => call(editor, { ...updateNote(payload), method: 'update-note' }), 400);
    await expectRejected(() => call(editor, { payload }), 400);
    await expectRejected(() => call(editor, { ...updateNote(payload), extra: true }), 400);
    await expectRejected(() => call(editor, updateNote(payload, -1)), 400);
    await expectRejected(() => call(editor, { ...updateNote(payload), expect: { version: '1' } }), 400);
    expect(await noteEvents(id)).toEqual([]);
  });

  it('refuses an unknown competitor (404) and a deleted one (404, "This competitor was deleted.")', async () => {
    await expectRejected(
      () => call(editor, updateNote({ competitorId: randomUUID(), column: 'pricing', value: 'x' })),
      404,
      'This competitor does not exist.',
    );

    const id = await newCompetitor();
    const deleted = await app.runtime.route(
      envelope({ type: 'DeleteCompetitor', payload: { competitorId: id } }),
    );
    expect(deleted.status).toBe('accepted');
    const answer = await expectRejected(
      () => call(editor, updateNote({ competitorId: id, column: 'pricing', value: 'Too late' }, 0)),
      404,
      'This competitor was deleted.',
    );
    expect(answer).toMatchObject({ status: 'rejected', code: 'not_found' });
    expect(await noteEvents(id)).toEqual([]);
  });

  it('refuses a stale version (409) with who changed the note, when, and their text', async () => {
    const id = await newCompetitor();
    const first = await call(
      admin,
      updateNote({ competitorId: id, column: 'weaknesses', value: 'Mine first' }, 0),
    );
    expect(first.answer.status).toBe('accepted');
    const second = await call(
      admin,
      updateNote({ competitorId: id, column: 'weaknesses', value: 'Then theirs' }, 1),
    );
    expect(second.answer.status).toBe('accepted');
    const [, latest] = await noteEvents(id);

    // The editor's dialog was opened at version 1.
    const answer = await expectRejected(
      () => call(editor, updateNote({ competitorId: id, column: 'weaknesses', value: 'Stale edit' }, 1)),
      409,
      /^Test admin changed this note at \d{1,2} \w{3,4} \d{4}, \d{2}:\d{2} UTC, after you opened it\.$/,
    );
    expect(answer).toMatchObject({ status: 'rejected', code: 'conflict' });
    expect(answer.details).toEqual({
      column: 'weaknesses',
      currentValue: 'Then theirs',
      currentVersion: 2,
      changedBy: 'Test admin',
      changedByYou: false,
      changedAt: latest?.metadata.at,
    });
    expect(Number.isNaN(Date.parse(String(answer.details?.changedAt)))).toBe(false);
    // The admin's own other tab, opened at version 1: the message says it was them, not "Test admin".
    const own = await expectRejected(
      () => call(admin, updateNote({ competitorId: id, column: 'weaknesses', value: 'Own stale' }, 1)),
      409,
      /^You changed this note at \d{1,2} \w{3,4} \d{4}, \d{2}:\d{2} UTC in another tab or window, after you opened it here\.$/,
    );
    expect(own.details).toMatchObject({ changedBy: 'Test admin', changedByYou: true });
    // A viewer in Tokyo reads the time on their own clock, as every page writes it (decision 0019).
    editor.cookies.set(TIME_ZONE_COOKIE, 'Asia/Tokyo');
    const tokyo = await expectRejected(
      () => call(editor, updateNote({ competitorId: id, column: 'weaknesses', value: 'Stale edit' }, 1)),
      409,
      /GMT\+9, after you opened it\.$/,
    );
    editor.cookies.delete(TIME_ZONE_COOKIE);
    expect(tokyo.message).toBe(
      `Test admin changed this note at ${formatTime(String(latest?.metadata.at), 'Asia/Tokyo')}, after you opened it.`,
    );
    // Another column is not affected by that version, and the current version goes through.
    const other = await call(editor, updateNote({ competitorId: id, column: 'general', value: 'Other' }, 0));
    expect(other.answer.status).toBe('accepted');
    const overwrite = await call(
      editor,
      updateNote({ competitorId: id, column: 'weaknesses', value: 'Overwritten' }, 2),
    );
    expect(overwrite.answer.status).toBe('accepted');
    const card = await (await editor.get(`/competitors/${id}`)).text();
    expect(card).toContain('Overwritten');
  });

  it('refuses a viewer (403)', async () => {
    const id = await newCompetitor();
    await expectRejected(
      () => call(viewer, updateNote({ competitorId: id, column: 'pricing', value: 'Viewer note' })),
      403,
      'You do not have permission to do that.',
    );
    expect(await noteEvents(id)).toEqual([]);
  });

  it('refuses a call without X-Requested-With (400), without or with a wrong CSRF token (403), or signed out (401)', async () => {
    const id = await newCompetitor();
    const body = updateNote({ competitorId: id, column: 'pricing', value: 'x' });
    await expectRejected(
      () => call(editor, body, { xhr: false }),
      400,
      'Component calls must be sent with X-Requested-With: XMLHttpRequest.',
    );
    await expectRejected(
      () => call(editor, body, { csrf: false }),
      403,
      /form token is missing or out of date/,
    );
    await expectRejected(() => call(editor, body, { csrf: 'forged-token' }), 403);
    await expectRejected(() => call(editor, body, { origin: 'https://evil.example' }), 403);
    // Signed out: with the visitor's own CSRF token the guard answers 401; without one, CSRF refuses first.
    const visitor = await app.client();
    await visitor.get('/login');
    await expectRejected(() => call(visitor, body), 401, 'Please sign in to continue.');
    await expectRejected(() => call(visitor, body, { csrf: false }), 403);
    expect(await noteEvents(id)).toEqual([]);
  });

  it('refuses an unknown component, event or method (404)', async () => {
    const id = await newCompetitor();
    const payload = { competitorId: id, column: 'pricing', value: 'x' };
    await expectRejected(
      () => call(editor, updateNote(payload), undefined, '/components/no-such-component'),
      404,
      'There is no component named "no-such-component".',
    );
    await expectRejected(() => call(editor, updateNote(payload), undefined, '/components/__proto__'), 404);
    await expectRejected(
      () => call(editor, { event: 'delete-note', payload }),
      404,
      'competitor-notes has no event named "delete-note".',
    );
    await expectRejected(() => call(editor, { event: 'toString', payload }), 404);
    await expectRejected(() => call(editor, { method: 'update-note', payload }), 404);
    expect(await noteEvents(id)).toEqual([]);
  });
});
