import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventCount, messageOf } from '#tests/security/support/helpers.ts';
import {
  securityBackends,
  startSecuritySuite,
  type SecurityApp,
} from '#tests/security/support/security-app.ts';
import type { TestClient } from '#tests/support/test-client.ts';

/*
 * Bytes that are not UTF-8, at every entry point that reads text over HTTP. The body parser (co-body)
 * and Node's query parser decode with replacement: a client sending Latin-1 (é as the byte 0xE9) got
 * "Caf�" saved and was told it was saved. Now each is refused with a 400 that says what to send, and
 * nothing is stored; UTF-8 of every length (é, emoji, CJK, even a sent U+FFFD) is read as before.
 */
const NOT_UTF8_BODY = 'The request body is not UTF-8 text';
const NOT_UTF8_QUERY = 'The address is not UTF-8 text';
const FORM = 'application/x-www-form-urlencoded';
const latin1 = (text: string) => Buffer.from(text, 'latin1');
const utf8 = (text: string) => Buffer.from(text, 'utf8');

describe.each(securityBackends)('text that is not UTF-8, on %s', (backend) => {
  let app: SecurityApp;
  let editor: TestClient;
  let competitorId: string;

  beforeAll(async () => {
    ({ app, editor } = await startSecuritySuite(backend));
    const { rows } = await app.db.pool.query<{ id: string }>('SELECT id FROM competitor_list LIMIT 1');
    competitorId = rows[0]?.id ?? '';
  });
  afterAll(() => app?.close());

  /** `body` (bytes as given) sent by the editor's browser to `path`, with its token. */
  async function send(path: string, type: string, body: Buffer, headers: Record<string, string> = {}) {
    return fetch(`${app.url}${path}`, {
      method: 'POST',
      headers: {
        Cookie: editor.cookieHeader(),
        Origin: app.url,
        'Content-Type': type,
        'X-CSRF-Token': editor.csrfToken,
        ...(type === FORM ? {} : { 'X-Requested-With': 'XMLHttpRequest' }),
        ...headers,
      },
      body: new Uint8Array(body),
      redirect: 'manual',
    });
  }

  /** The add-competitor form with `name` written as the bytes `encode` makes of it. */
  async function addCompetitor(name: string, encode: (text: string) => Buffer) {
    await editor.get('/competitors/new');
    const rest = `&website=&segmentId=smb&threat=low&headquarters=&_idempotency_key=${randomUUID()}&_csrf=${encodeURIComponent(editor.csrfToken)}`;
    return send('/competitors/new', FORM, Buffer.concat([utf8('name='), encode(name), utf8(rest)]));
  }

  const competitorsNamed = async (prefix: string) =>
    (
      await app.db.pool.query<{ name: string }>('SELECT name FROM competitor_list WHERE name LIKE $1', [
        `${prefix}%`,
      ])
    ).rows.map((row) => row.name);

  const noteCall = (value: string) =>
    JSON.stringify({ event: 'update-note', payload: { competitorId, column: 'general', value } });
  const note = async () =>
    (
      await app.db.pool.query<{ general: string }>('SELECT general FROM competitor_list WHERE id = $1', [
        competitorId,
      ])
    ).rows[0]?.general;

  it('a form in Latin-1 is refused saying so, and no competitor is added', async () => {
    const tag = `Caf${randomUUID().slice(0, 6)}`;
    const added = await eventCount(app, 'CompetitorAdded');
    const answer = await addCompetitor(`${tag} é`, latin1);
    expect(answer.status).toBe(400);
    const text = await messageOf(answer);
    expect(text).toContain(NOT_UTF8_BODY);
    expect(text).toContain('0xE9');
    expect(await eventCount(app, 'CompetitorAdded')).toBe(added);
    expect(await competitorsNamed(tag)).toEqual([]);
  });

  it('a form in UTF-8, raw or percent-encoded, keeps é, emoji and CJK as sent', async () => {
    for (const encode of [utf8, (text: string) => utf8(encodeURIComponent(text))]) {
      const tag = `Utf${randomUUID().slice(0, 6)}`;
      const name = `${tag} Café 😀 東京 \uFFFD`;
      const answer = await addCompetitor(name, encode);
      expect(answer.status, name).toBe(302);
      expect(await competitorsNamed(tag)).toEqual([name]);
    }
  });

  it('a JSON call in Latin-1, plain or gzipped, is refused saying so, and the note keeps its text', async () => {
    await editor.get('/competitors');
    const before = `kept ${randomUUID()}`;
    const set = await send('/components/competitor-notes', 'application/json', utf8(noteCall(before)));
    expect(set.status).toBe(200);
    expect(await note()).toBe(before);
    const body = latin1(noteCall('Café'));
    for (const [sent, headers] of [
      [body, {}],
      [gzipSync(body), { 'Content-Encoding': 'gzip' }],
    ] as const) {
      const answer = await send('/components/competitor-notes', 'application/json', sent, headers);
      expect(answer.status).toBe(400);
      expect(await messageOf(answer)).toContain(NOT_UTF8_BODY);
      expect(await note()).toBe(before);
    }
  });

  it('a JSON call in UTF-8, plain or gzipped, keeps é, emoji, CJK and a sent U+FFFD', async () => {
    await editor.get('/competitors');
    for (const gzip of [false, true]) {
      const value = `Café 😀 東京 \uFFFD ${randomUUID()}`;
      const body = utf8(noteCall(value));
      const answer = await send(
        '/components/competitor-notes',
        'application/json',
        gzip ? gzipSync(body) : body,
        gzip ? { 'Content-Encoding': 'gzip' } : {},
      );
      expect(answer.status).toBe(200);
      expect(await note()).toBe(value);
    }
  });

  it('a body sent in pieces is read whole: a character split between pieces is kept, past the limit is too large', async () => {
    await editor.get('/competitors');
    /** `pieces` sent as a stream (chunked, no Content-Length), one write each. */
    const streamed = (pieces: Buffer[]) =>
      fetch(`${app.url}/components/competitor-notes`, {
        method: 'POST',
        headers: {
          Cookie: editor.cookieHeader(),
          Origin: app.url,
          'Content-Type': 'application/json',
          'X-CSRF-Token': editor.csrfToken,
          'X-Requested-With': 'XMLHttpRequest',
        },
        body: new ReadableStream({
          start(controller) {
            for (const piece of pieces) controller.enqueue(new Uint8Array(piece));
            controller.close();
          },
        }),
        duplex: 'half',
      } as RequestInit);
    const value = `東京 😀 ${randomUUID()}`;
    const whole = utf8(noteCall(value));
    const cut = whole.indexOf(utf8('京')) + 1; // inside 京's three bytes
    const split = await streamed([whole.subarray(0, cut), whole.subarray(cut)]);
    expect(split.status).toBe(200);
    expect(await note()).toBe(value);
    const large = await streamed(Array.from({ length: 20 }, () => utf8('x'.repeat(4096))));
    expect(large.status).toBe(413);
    expect(await messageOf(large)).toContain('The request is too large: at most 64 kB');
    expect(await note()).toBe(value);
  });

  it('a query string whose escapes are not UTF-8 is refused saying so; UTF-8 escapes are read', async () => {
    for (const query of ['search=%E9', 'search=Caf%E9', 'search=%C3%A9%E9', 'page=1&sort=%FF']) {
      const page = await editor.get(`/competitors?${query}`);
      expect(page.status, query).toBe(400);
      expect(await messageOf(page), query).toContain(NOT_UTF8_QUERY);
    }
    for (const query of ['search=%C3%A9', 'search=%F0%9F%98%80', 'search=%E6%9D%B1', 'search=50%']) {
      const page = await editor.get(`/competitors?${query}`);
      expect(page.status, query).toBe(200);
      await page.arrayBuffer();
    }
  });
});
