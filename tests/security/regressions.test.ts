import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { io } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoginLimiter } from '#web/auth/login-limiter.server.ts';
import { BACKGROUND_HEADER } from '#web/background-request.ts';
import { createRealtime } from '#web/realtime/realtime.server.ts';
import { silentLog } from '#tests/support/runtime-pieces.ts';
import { TEST_PASSWORD, testEmails } from '#tests/support/test-app.ts';
import { TestClient } from '#tests/support/test-client.ts';
import { eventCount, freshUser, messageOf, waitFor } from './support/helpers.ts';
import {
  disconnection,
  handshakeResult,
  METRICS_TOKEN,
  securityBackends,
  startSecuritySuite,
  type SecurityApp,
} from './support/security-app.ts';

/**
 * One test per repro of issue 9, on both backends: each used to crash the process, redirect off-site,
 * leak live updates to a revoked session, lose a write silently, or answer 500.
 */

const CONTROL = /control characters/;
const NOT_UUID = 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz'; // 36 characters, not a UUID
const DASHES = '-'.repeat(36);

/** Opens an Engine.IO long-polling session with a raw Cookie header: the server speaks WebSocket only. */
async function pollingOpen(url: string, cookie: string): Promise<{ status: number; body: string }> {
  const open = await fetch(`${url}/socket.io/?EIO=4&transport=polling`, { headers: { Cookie: cookie } });
  return { status: open.status, body: await open.text() };
}

describe.each(securityBackends)('issue 9 repros on %s', (backend) => {
  let app: SecurityApp;
  let admin: TestClient;
  let editor: TestClient;

  beforeAll(async () => ({ app, admin, editor } = await startSecuritySuite(backend)));
  afterAll(() => app?.close());

  const alive = async () => expect((await fetch(`${app.url}/healthz`)).status).toBe(200);

  it('1. a malformed session cookie or a foreign Origin refuses the socket and the server stays up', async () => {
    for (const cookie of ['rivals_session=%E0%A4%A', 'rivals_session=%', 'rivals_session=a%00b']) {
      // Long-polling opens no session for anyone (it needed no cookie to hold one ~45 s).
      expect(await pollingOpen(app.url, cookie)).toEqual({
        status: 400,
        body: JSON.stringify({ code: 0, message: 'Transport unknown' }),
      });
      const socket = app.socket({ cookie });
      expect(await handshakeResult(socket)).toEqual({ connected: false, message: 'sign in first' });
    }
    const host = new URL(app.url).host;
    // …and our own host under the other scheme is another origin too.
    for (const origin of [
      'null',
      'garbage',
      `http://${host}.evil.example`,
      'http://[::1',
      '',
      `https://${host}`,
    ]) {
      const socket = app.socket({ cookie: editor.cookieHeader(), origin });
      expect(await handshakeResult(socket), origin).toEqual({
        connected: false,
        message: 'forbidden origin',
      });
    }
    // Our own origin with a valid session still connects.
    const ok = app.socket({ cookie: editor.cookieHeader(), origin: app.url });
    expect(await handshakeResult(ok)).toEqual({ connected: true, message: '' });
    ok.disconnect();
    await alive();
  });

  it('2. next after sign-in never leaves the site, however the path is spelled', async () => {
    for (const next of [
      '/.//evil.example/x',
      '/..//evil.example',
      '/a/..//evil.example',
      '/%2e//evil.example',
    ]) {
      const signedIn = await admin.get(`/login?next=${encodeURIComponent(next)}`);
      expect(signedIn.status, next).toBe(302);
      const location = signedIn.headers.get('location') ?? '';
      expect(location, next).toMatch(/^\/(?!\/)/);
      expect(location, next).not.toContain('evil.example');

      const visitor = new TestClient(app.url);
      await visitor.get('/login');
      const posted = await visitor.postForm('/login', {
        email: testEmails.viewer,
        password: TEST_PASSWORD,
        next,
      });
      expect(posted.status, next).toBe(302);
      expect(posted.headers.get('location'), next).toBe('/competitors');
    }
    // A good local next is still honoured.
    expect((await admin.get('/login?next=%2Faudit%3Fpage%3D2')).headers.get('location')).toBe(
      '/audit?page=2',
    );
  });

  describe('3. a socket follows its session', () => {
    it('sign-out closes it (told session-ended) on the signal, not on a timer', async () => {
      const user = await freshUser(app, 'editor', 'signout');
      const socket = app.socket({ cookie: user.client.cookieHeader() });
      expect((await handshakeResult(socket)).connected).toBe(true);
      const closed = disconnection(socket);
      const started = Date.now();
      await user.client.postForm('/logout', {});
      const { reason, told, at } = await closed;
      expect({ reason, told }).toEqual({ reason: 'io server disconnect', told: true });
      console.log(`SECURITY ${backend} revoke=sign-out socket closed after ${at - started} ms`);
    });

    it('disabling the user closes it', async () => {
      const user = await freshUser(app, 'viewer', 'disable');
      const socket = app.socket({ cookie: user.client.cookieHeader() });
      expect((await handshakeResult(socket)).connected).toBe(true);
      const closed = disconnection(socket);
      const started = Date.now();
      await admin.get('/users');
      expect((await admin.postForm(`/users/${user.id}/disable`, {})).status).toBe(302);
      const { reason, told, at } = await closed;
      expect({ reason, told }).toEqual({ reason: 'io server disconnect', told: true });
      console.log(`SECURITY ${backend} revoke=disable socket closed after ${at - started} ms`);
    });

    it('a role change reaches the socket (its user and rooms) without reconnecting', async () => {
      const user = await freshUser(app, 'viewer', 'role');
      const socket = app.socket({ cookie: user.client.cookieHeader() });
      expect((await handshakeResult(socket)).connected).toBe(true);
      const roleOnServer = async () =>
        (await app.realtime.io.fetchSockets()).find((s) => s.data.user?.id === user.id)?.data.user?.role;
      expect(await roleOnServer()).toBe('viewer');
      const started = Date.now();
      await admin.get('/users');
      expect((await admin.postForm(`/users/${user.id}/role`, { role: 'editor' })).status).toBe(302);
      await waitFor(async () => (await roleOnServer()) === 'editor', 'the socket to see the new role');
      console.log(`SECURITY ${backend} revoke=role-change socket updated after ${Date.now() - started} ms`);
      expect(socket.connected).toBe(true);
    });

    /** When the session of the user with this email last counted as active (undefined: it ended). */
    const lastSeenOf = async (email: string) =>
      (
        await app.db.pool.query<{ at: Date }>(
          'SELECT s.last_seen_at AS at FROM sessions s JOIN user_list u ON u.id = s.user_id WHERE u.email = $1',
          [email],
        )
      ).rows[0]?.at.getTime();
    /** The session of the user with this email, last active this long ago. */
    const idleFor = (email: string, interval: string) =>
      app.db.pool.query(
        `UPDATE sessions SET last_seen_at = now() - $2::interval
         WHERE user_id = (SELECT id FROM user_list WHERE email = $1)`,
        [email, interval],
      );

    it('connecting a socket is not activity: it does not hold off the idle end of its session', async () => {
      // A tab left open reconnects by itself (a network blip, a restart): were that a request, an
      // unattended browser would stay signed in until the absolute end, whatever the idle timeout.
      const user = await freshUser(app, 'viewer', 'idle');
      const lastSeen = () => lastSeenOf(user.email);
      await idleFor(user.email, '2 hours');
      const before = await lastSeen();
      const socket = app.socket({ cookie: user.client.cookieHeader() });
      expect((await handshakeResult(socket)).connected).toBe(true);
      expect(await lastSeen()).toBe(before);
      socket.disconnect();
      // A request is activity.
      await user.client.get('/competitors');
      expect(await lastSeen()).toBeGreaterThan(before ?? Infinity);
    });

    it("a page's own background requests (position checks, live refreshes) are not activity either; a person's are", async () => {
      // The live position check runs every 20 s while a tab is visible: counted as activity, a tab left
      // open on a screen nobody watched kept its browser signed in for 7 days, whatever the idle timeout.
      const user = await freshUser(app, 'viewer', 'background');
      const lastSeen = () => lastSeenOf(user.email);
      await idleFor(user.email, '2 hours');
      const before = await lastSeen();
      const background = { xhr: true, headers: { [BACKGROUND_HEADER]: '1' } };
      const position = await user.client.get('/live/position', background);
      expect(position.status).toBe(200);
      expect((await user.client.get('/competitors?sort=name:asc', background)).status).toBe(200);
      expect(await lastSeen()).toBe(before);
      // Served while the session lasts; once idle too long, background requests end it like any other.
      await idleFor(user.email, '13 hours');
      expect((await user.client.get('/live/position', background)).status).toBe(401);
      expect(await lastSeen()).toBeUndefined();
      // A person's request is activity.
      const person = await freshUser(app, 'viewer', 'foreground');
      await idleFor(person.email, '2 hours');
      const idleSince = await lastSeenOf(person.email);
      await person.client.get('/live/position', { xhr: true });
      expect(await lastSeenOf(person.email)).toBeGreaterThan(idleSince ?? Infinity);
    });

    it('session expiry closes it at the session end', async () => {
      // A second listener over the same database whose sessions end 2.5 s after sign-in.
      const server = createServer();
      const short = createRealtime({
        server,
        sessions: { ...app.sessions, absoluteMs: 2_500 },
        signals: app.signals,
        log: silentLog,
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const user = await freshUser(app, 'viewer', 'expiry');
        const socket = io(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, {
          transports: ['websocket'],
          reconnection: false,
          extraHeaders: { Cookie: user.client.cookieHeader() },
        });
        const closed = disconnection(socket);
        expect((await handshakeResult(socket)).connected).toBe(true);
        const { rows } = await app.db.pool.query<{ created: Date }>(
          'SELECT s.created_at AS created FROM sessions s JOIN user_list u ON u.id = s.user_id WHERE u.email = $1',
          [user.email],
        );
        const { reason, told, at } = await closed;
        expect({ reason, told }).toEqual({ reason: 'io server disconnect', told: true });
        const late = at - ((rows[0]?.created.getTime() ?? 0) + 2_500);
        expect(late).toBeGreaterThanOrEqual(-50);
        console.log(`SECURITY ${backend} revoke=expiry socket closed ${late} ms after the session end`);
        socket.disconnect();
      } finally {
        await short.close();
      }
    });
  });

  it('4. NUL and other control characters are refused with a message, and nothing is accepted unsaved', async () => {
    const before = await eventCount(app, 'CompetitorNoteUpdated');
    const { rows } = await app.db.pool.query<{ id: string }>('SELECT id FROM competitor_list LIMIT 1');
    const competitorId = rows[0]?.id ?? '';
    await editor.get('/competitors');
    const note = await editor.postJson('/components/competitor-notes', {
      event: 'update-note',
      payload: { competitorId, column: 'general', value: 'nul\u0000here' },
    });
    expect(note.status).toBe(400);
    expect(await messageOf(note)).toMatch(CONTROL);
    // Line breaks and tabs are fine in notes.
    const fine = await editor.postJson('/components/competitor-notes', {
      event: 'update-note',
      payload: { competitorId, column: 'general', value: 'line one\n\tline two' },
    });
    expect(fine.status).toBe(200);
    expect(await eventCount(app, 'CompetitorNoteUpdated')).toBe(before + 1);

    await editor.get('/competitors/new');
    for (const name of ['Nul\u0000Corp', 'Bell\u0007Corp', 'Tab\tCorp']) {
      const added = await editor.postForm('/competitors/new', {
        name,
        website: '',
        segmentId: 'smb',
        threat: 'low',
        headquarters: '',
      });
      expect(added.status, JSON.stringify(name)).toBe(400);
      expect(await messageOf(added)).toMatch(/Name cannot contain control characters/);
    }
    await admin.get('/users/new');
    const user = await admin.postForm('/users', {
      email: 'nul@rivals.test',
      displayName: 'Nul\u0000User',
      role: 'viewer',
      password: TEST_PASSWORD,
    });
    expect(user.status).toBe(400);
    expect(await messageOf(user)).toMatch(CONTROL);
  });

  it('5. inputs that used to answer 500 answer 4xx', async () => {
    for (const path of ['/competitors', '/users', '/audit']) {
      const response = await admin.get(`${path}?search=a%00b`);
      expect(response.status, path).toBe(400);
      expect(await messageOf(response)).toMatch(/Search cannot contain control characters/);
    }
    for (const id of [NOT_UUID, DASHES, "'; DROP TABLE events; --", '%E0%A4%A']) {
      const encoded = id === '%E0%A4%A' ? id : encodeURIComponent(id);
      for (const path of ['', '/history', '/edit'])
        expect((await admin.get(`/competitors/${encoded}${path}`)).status, `${id}${path}`).toBe(404);
      await admin.get('/users');
      for (const path of [`/competitors/${encoded}/edit`, `/competitors/${encoded}/delete`])
        expect((await admin.postForm(path, { name: 'x' })).status, path).toBe(404);
      for (const verb of ['role', 'disable', 'enable'])
        expect((await admin.postForm(`/users/${encoded}/${verb}`, { role: 'viewer' })).status, verb).toBe(
          404,
        );
    }
    expect((await fetch(`${app.url}/assets/%E0%A4%A`)).status).toBe(404);

    // 20,000 nested arrays (about 40 kB), unauthenticated: refused before anything else reads it.
    const deep = await fetch(`${app.url}/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: app.url },
      body: '['.repeat(20_000) + ']'.repeat(20_000),
    });
    expect(deep.status).toBe(400);
    expect(await messageOf(deep)).toMatch(/nested too deeply/);

    const visitor = new TestClient(app.url);
    await visitor.get('/login');
    const long = await visitor.postForm('/login', { email: `${'e'.repeat(300)}@x.test`, password: 'p' });
    expect(long.status).toBe(400);
    expect(await messageOf(long)).toMatch(/Email must be at most 254 characters/);
    const longPassword = await visitor.postForm('/login', { email: 'a@x.test', password: 'p'.repeat(2000) });
    expect(longPassword.status).toBe(400);
    const nulEmail = await visitor.postForm('/login', { email: 'a\u0000@x.test', password: 'p' });
    expect(nulEmail.status).toBe(400);
    await alive();
  });

  it('6. /metrics needs the operator token', async () => {
    expect((await fetch(`${app.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${app.url}/metrics`, { headers: { Authorization: 'Bearer wrong' } })).status).toBe(
      401,
    );
    expect((await admin.get('/metrics')).status).toBe(401); // an admin's session is not the token
    const ok = await fetch(`${app.url}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('rivals_http_request_duration_seconds');
  });
});

describe('6. an attacker cannot lock someone else out', () => {
  it('failures from one address lock that account only from that address', async () => {
    const limiter = createLoginLimiter(undefined, `test-${randomUUID()}:`);
    for (let i = 0; i < 5; i++) await limiter.failed('victim@rivals.test', '203.0.113.7');
    expect(await limiter.retryAfter('victim@rivals.test', '203.0.113.7')).toBeGreaterThan(0);
    // The owner, from their own address, is not affected.
    expect(await limiter.retryAfter('victim@rivals.test', '198.51.100.1')).toBe(0);
    // Spraying many accounts from one address locks that address.
    for (let i = 0; i < 15; i++) await limiter.failed(`user${i}@rivals.test`, '203.0.113.7');
    expect(await limiter.retryAfter('someone@rivals.test', '203.0.113.7')).toBeGreaterThan(0);
    expect(await limiter.retryAfter('someone@rivals.test', '198.51.100.1')).toBe(0);
  });
});
