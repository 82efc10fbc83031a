import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { createSearchPageCache } from '#projections/search-pages.ts';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Command } from '#events/command.ts';
import type { Role } from '#events/user/fields.ts';
import { createMetrics } from '#infra/metrics.ts';
import { createAccount } from '#services/user/accounts.ts';
import { appRoutes, createApp } from '#web/app.server.ts';
import { loadAssets } from '#web/assets/assets.server.ts';
import { cookieNames, hmac } from '#web/auth/cookies.server.ts';
import { createLoginLimiter } from '#web/auth/login-limiter.server.ts';
import { STALE_SIGN_OUT } from '#web/pages/login/stale-sign-out.server.tsx';
import type { RouteDef } from '#web/routing.server.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { addCompetitorCommand, envelope } from '#tests/support/runtime-pieces.ts';
import { withSuiteApp } from '#tests/support/suite-app.ts';
import { TEST_PASSWORD, testEmails, type TestApp } from '#tests/support/test-app.ts';
import { TestClient, type RequestOptions } from '#tests/support/test-client.ts';

/**
 * CSRF on every state-changing route, and the session cookie's life: rotation at sign-in, death at
 * sign-out and on disable, its flags over http and https, and where sign-in may send the visitor next.
 */

/** startTestApp's session secret (tests/support/test-app.ts); each use is checked against a live row first. */
const TEST_SESSION_SECRET = 's'.repeat(40);
const names = cookieNames(false);
const sessionRowId = (token: string) => hmac(TEST_SESSION_SECRET, `session:${token}`);
const assetsDir = fileURLToPath(new URL('../../dist/assets/', import.meta.url));

const postRoutes = appRoutes.filter((def) => def.method === 'POST');

const CSRF_MESSAGE = 'Your session form token is missing or out of date. Reload the page and try again.';
const CROSS_SITE_MESSAGE = 'This request came from another site and was blocked.';

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(20);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function count(app: TestApp, table: 'events' | 'sessions' | 'user_credentials'): Promise<number> {
  const { rows } = await app.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
  return rows[0]?.n ?? -1;
}

const snapshot = async (app: TestApp) => ({
  events: await count(app, 'events'),
  sessions: await count(app, 'sessions'),
  credentials: await count(app, 'user_credentials'),
});

async function sessionRows(app: TestApp, token: string): Promise<number> {
  const { rows } = await app.db.pool.query('SELECT 1 FROM sessions WHERE id = $1', [sessionRowId(token)]);
  return rows.length;
}

/** The session cookie's Set-Cookie line in a response (the last one wins, as in a browser). */
function sessionSetCookie(response: Response, name = names.session): string | undefined {
  return response.headers
    .getSetCookie()
    .filter((line) => line.startsWith(`${name}=`))
    .at(-1);
}

async function newUser(app: TestApp, role: Role, label: string): Promise<{ id: string; email: string }> {
  const email = `${label}@rivals.test`;
  const { userId, outcome } = await createAccount(
    app.db.pool,
    (command) => app.runtime.route(envelope(command)),
    { email, displayName: `Throwaway ${label}`, role, password: TEST_PASSWORD },
  );
  expect(outcome?.status).toBe('accepted');
  await waitFor(async () => {
    const { rows } = await app.db.pool.query('SELECT 1 FROM user_list WHERE id = $1', [userId]);
    return rows.length > 0;
  }, `user ${label}`);
  return { id: userId, email };
}

async function signedIn(app: TestApp, email: string): Promise<TestClient> {
  const client = new TestClient(app.url);
  await client.signIn(email, TEST_PASSWORD);
  return client;
}

async function expectSignedOut(client: TestClient): Promise<void> {
  const page = await client.get('/competitors');
  expect(page.status).toBe(302);
  expect(page.headers.get('location')).toBe('/login?next=%2Fcompetitors');
  const xhr = await client.get('/competitors', { xhr: true });
  expect(xhr.status).toBe(401);
}

describe.each(databaseBackends)('CSRF and sessions (%s)', (backend) => {
  let app: TestApp;
  let admin: TestClient;

  withSuiteApp(backend, (started, signedIn) => {
    app = started;
    admin = signedIn;
  });

  describe('every state-changing route refuses requests without our token and origin', () => {
    const targets = { competitor: '', user: '' };
    /** Another session's perfectly valid token: right shape, wrong session. */
    let foreignToken = '';

    beforeAll(async () => {
      const add = addCompetitorCommand('CSRF Target Inc');
      expect((await app.runtime.route(envelope(add))).status).toBe('accepted');
      targets.competitor = add.payload.competitorId;
      await waitFor(async () => {
        const { rows } = await app.db.pool.query('SELECT 1 FROM competitor_list WHERE id = $1', [
          targets.competitor,
        ]);
        return rows.length > 0;
      }, 'the target competitor');
      targets.user = (await newUser(app, 'viewer', 'csrf-target')).id;
      const visitor = new TestClient(app.url);
      await visitor.get('/login');
      foreignToken = visitor.csrfToken;
      expect(foreignToken).toMatch(/^[\w-]{20,}$/);
    });

    /** The body that WOULD change something if the request got through. */
    function request(def: RouteDef): { path: string; fields: Record<string, string>; effective: boolean } {
      const path = def.path.replace(
        ':id',
        def.path.startsWith('/users/') ? targets.user : targets.competitor,
      );
      const competitor = {
        name: 'CSRF Probe Corp',
        website: 'https://csrf-probe.example',
        segmentId: 'smb',
        threat: 'high',
        headquarters: 'Nowhere',
      };
      const fields: Record<string, Record<string, string>> = {
        '/login': { email: testEmails.admin, password: TEST_PASSWORD },
        '/logout': {},
        '/competitors/new': competitor,
        // As its form carries it: the version it was opened at (the target was added once, in beforeAll).
        '/competitors/:id/edit': { ...competitor, name: 'CSRF Hijacked Corp', expectedVersion: '1' },
        '/competitors/:id/delete': {},
        '/users': {
          email: 'csrf-probe@rivals.test',
          displayName: 'CSRF Probe',
          role: 'admin',
          password: 'csrf-probe-password',
        },
        '/users/:id/role': { role: 'admin' },
        '/users/:id/disable': {},
        '/users/:id/enable': {},
      };
      const body = fields[def.path];
      // A route added later still gets the refusals checked; give it a body here to get the control too.
      return { path, fields: body ?? {}, effective: body !== undefined };
    }

    const attacks: { name: string; options: () => RequestOptions; message: string; json?: boolean }[] = [
      { name: 'no token', options: () => ({ csrf: false }), message: CSRF_MESSAGE },
      { name: "another session's token", options: () => ({ csrf: foreignToken }), message: CSRF_MESSAGE },
      { name: 'a garbage token', options: () => ({ csrf: 'x'.repeat(43) }), message: CSRF_MESSAGE },
      {
        name: 'a valid token from Origin https://evil.example',
        options: () => ({ origin: 'https://evil.example' }),
        message: CROSS_SITE_MESSAGE,
      },
      {
        name: 'a valid token from Origin null',
        options: () => ({ origin: 'null' }),
        message: CROSS_SITE_MESSAGE,
      },
      {
        name: 'a valid token with Sec-Fetch-Site: cross-site',
        options: () => ({ secFetchSite: 'cross-site' }),
        message: CROSS_SITE_MESSAGE,
      },
      {
        name: 'a valid token with Sec-Fetch-Site: same-site',
        options: () => ({ secFetchSite: 'same-site' }),
        message: CROSS_SITE_MESSAGE,
      },
      {
        name: 'an XHR with a wrong X-CSRF-Token',
        options: () => ({ csrf: foreignToken }),
        message: CSRF_MESSAGE,
        json: true,
      },
    ];

    it.each(postRoutes)('POST $path', async (def) => {
      const { path, fields, effective } = request(def);
      const cookieBefore = admin.cookies.get(names.session);
      expect(cookieBefore).toBeTruthy();
      for (const attack of attacks) {
        expect((await admin.get('/competitors')).status).toBe(200); // a fresh, valid token to misuse
        const before = await snapshot(app);
        const response = attack.json
          ? await admin.postJson(path, fields, attack.options())
          : await admin.postForm(path, fields, attack.options());
        expect(response.status, attack.name).toBe(403);
        if (attack.json) {
          expect(await response.json(), attack.name).toEqual({
            error: { code: 'forbidden', message: attack.message },
          });
        } else {
          // A page's Sign out whose token does not match asks again, with a button that works (a stale
          // tab's, docs/behaviour.md §13): still refused, nobody signed out.
          const message =
            def.path === '/logout' && attack.message === CSRF_MESSAGE ? STALE_SIGN_OUT : attack.message;
          expect(await response.text(), attack.name).toContain(message);
        }
        expect(await snapshot(app), attack.name).toEqual(before);
        // The session is untouched (not rotated, not ended) and still works.
        expect(admin.cookies.get(names.session), attack.name).toBe(cookieBefore);
        expect((await admin.get('/users')).status, attack.name).toBe(200);
      }

      // The control: the very same request with our token from our own page does take effect.
      if (!effective || def.path === '/login' || def.path === '/logout') return;
      expect((await admin.get('/competitors')).status).toBe(200);
      const before = await count(app, 'events');
      const response = await admin.postForm(path, fields);
      expect(response.status).toBe(302);
      expect(await count(app, 'events')).toBeGreaterThan(before);
    });

    it('a page whose session ended meanwhile is told so (401), not that its form is broken; nothing changes', async () => {
      const editor = await newUser(app, 'editor', 'ended-session');
      const client = await signedIn(app, editor.email);
      await client.get('/competitors/new');
      // Ended elsewhere: signed out on another device, expired, or the account disabled.
      await app.db.pool.query('DELETE FROM sessions WHERE user_id = $1', [editor.id]);
      const before = await snapshot(app);
      const response = await client.postForm('/competitors/new', {
        name: 'After the session',
        segmentId: 'smb',
        threat: 'low',
      });
      expect(response.status).toBe(401);
      expect(await response.text()).toContain('Your session has ended');
      expect(await snapshot(app)).toEqual(before);
      // Signing out of it is no error: the user is signed out, as they asked.
      const signOut = await client.postForm('/logout', {});
      expect(signOut.status).toBe(302);
      expect(signOut.headers.get('location')).toBe('/login');
    });

    it("GET /session says who this browser is signed in as now, with that session's form token (a refused page renews from it), never cached", async () => {
      const editor = await newUser(app, 'editor', 'session-now');
      const client = await signedIn(app, editor.email);
      await client.get('/competitors/new');
      const pageToken = client.csrfToken;
      const now = await client.get('/session');
      expect(now.status).toBe(200);
      expect(now.headers.get('cache-control')).toBe('no-store');
      expect(await now.json()).toEqual({ userId: editor.id, csrfToken: pageToken });
      // Signed out and in again (another tab): a new session, so a new token the old page can take.
      await client.postForm('/logout', {});
      const signedOut = (await (await client.get('/session')).json()) as {
        userId: unknown;
        csrfToken: string;
      };
      expect(signedOut.userId).toBeNull();
      expect(signedOut.csrfToken).not.toBe(pageToken);
      const again = await signedIn(app, editor.email);
      const renewed = (await (await again.get('/session')).json()) as { userId: string; csrfToken: string };
      expect(renewed.userId).toBe(editor.id);
      expect(renewed.csrfToken).not.toBe(pageToken);
      const saved = await again.postForm(
        '/competitors/new',
        { name: 'Renewed from /session', segmentId: 'smb', threat: 'low' },
        { csrf: renewed.csrfToken },
      );
      expect(saved.status).toBe(302);
    });

    it('GET /session (as a page asks it) does not take the message meant for the next page', async () => {
      const client = await signedIn(app, (await newUser(app, 'editor', 'session-flash')).email);
      await client.get('/competitors');
      expect((await client.postForm('/logout', {})).status).toBe(302);
      // Another tab's refused call looks at the session meanwhile (web/client/session-renewal.ts).
      const now = await client.get('/session', { headers: { Accept: 'application/json' } });
      expect(((await now.json()) as { userId: unknown }).userId).toBeNull();
      expect(await (await client.get('/login')).text()).toContain('You are signed out.');
    });

    it('a page signed out in another tab (its cookie gone with it) is told its session ended (401), not to reload; nothing changes', async () => {
      const editor = await newUser(app, 'editor', 'signed-out-tab');
      const client = await signedIn(app, editor.email);
      await client.get('/competitors/new');
      const pageToken = client.csrfToken;
      // The other tab signs out: the browser's session cookie is cleared for every tab.
      expect((await client.postForm('/logout', {})).status).toBe(302);
      expect(client.cookies.get(names.session)).toBeUndefined();
      const before = await snapshot(app);
      const form = await client.postForm(
        '/competitors/new',
        { name: 'After signing out', segmentId: 'smb', threat: 'low' },
        { csrf: pageToken },
      );
      expect(form.status).toBe(401);
      expect(await form.text()).toContain('Your session has ended');
      const call = await client.postJson(
        '/components/competitor-notes',
        { event: 'update-note', payload: { competitorId: randomUUID(), column: 'general', value: 'x' } },
        { csrf: pageToken },
      );
      expect(call.status).toBe(401);
      expect(((await call.json()) as { error: { message: string } }).error.message).toContain(
        'Your session has ended',
      );
      expect(await snapshot(app)).toEqual(before);
      // The stale tab's own "Sign out" is no error either.
      const signOut = await client.postForm('/logout', {}, { csrf: pageToken });
      expect(signOut.status).toBe(302);
      expect(signOut.headers.get('location')).toBe('/login');
      // A sign-in with a stale token is still the sign-in form's own refusal.
      const login = await client.postForm(
        '/login',
        { email: editor.email, password: TEST_PASSWORD },
        { csrf: pageToken },
      );
      expect(login.status).toBe(403);
    });

    it('POST /login refuses a sign-in without a valid token (login CSRF)', async () => {
      for (const csrf of [false, 'x'.repeat(43)] as const) {
        const visitor = new TestClient(app.url);
        expect((await visitor.get('/login')).status).toBe(200);
        const before = await snapshot(app);
        const response = await visitor.postForm(
          '/login',
          { email: testEmails.admin, password: TEST_PASSWORD },
          { csrf },
        );
        expect(response.status).toBe(403);
        expect(await response.text()).toContain(CSRF_MESSAGE);
        expect(sessionSetCookie(response)).toBeUndefined();
        expect(await snapshot(app)).toEqual(before);
        await expectSignedOut(visitor);
      }
      // ...and from another site even with the visitor's own token.
      const visitor = new TestClient(app.url);
      await visitor.get('/login');
      const response = await visitor.postForm(
        '/login',
        { email: testEmails.admin, password: TEST_PASSWORD },
        { origin: 'https://evil.example' },
      );
      expect(response.status).toBe(403);
      expect(sessionSetCookie(response)).toBeUndefined();
      await expectSignedOut(visitor);
    });
  });

  describe('session cookie', () => {
    it('is HttpOnly, SameSite=Lax, Path=/ and (over http) not Secure, and gets a new value at every sign-in', async () => {
      const client = new TestClient(app.url);
      await client.get('/login');
      const anonymousToken = client.csrfToken;
      // A session id planted by an attacker before sign-in (session fixation) is never adopted.
      const planted = 'planted-session-value-0123456789abcdef';
      client.cookies.set(names.session, planted);

      const first = await client.postForm('/login', { email: testEmails.editor, password: TEST_PASSWORD });
      expect(first.status).toBe(302);
      const line = sessionSetCookie(first) ?? '';
      const attributes = line.split(';').map((part) => part.trim().toLowerCase());
      expect(attributes).toContain('httponly');
      expect(attributes).toContain('samesite=lax');
      expect(attributes).toContain('path=/');
      expect(attributes).not.toContain('secure');
      expect(attributes.some((a) => a.startsWith('domain='))).toBe(false);

      const firstToken = client.cookies.get(names.session) ?? '';
      expect(firstToken).toMatch(/^[\w-]{40,}$/);
      expect(firstToken).not.toBe(planted);
      expect(await sessionRows(app, firstToken)).toBe(1);
      expect((await client.get('/competitors')).status).toBe(200);
      // The form token moves from the anonymous basis to the session.
      expect(client.csrfToken).not.toBe(anonymousToken);

      // Signing in again from the same browser: yet another value, and the previous one is dead.
      const second = await client.postForm('/login', { email: testEmails.editor, password: TEST_PASSWORD });
      expect(second.status).toBe(302);
      const secondToken = client.cookies.get(names.session) ?? '';
      expect(secondToken).toMatch(/^[\w-]{40,}$/);
      expect(secondToken).not.toBe(firstToken);
      expect(await sessionRows(app, firstToken)).toBe(0);
      expect(await sessionRows(app, secondToken)).toBe(1);
      expect((await client.get('/competitors')).status).toBe(200);

      const replay = new TestClient(app.url);
      replay.cookies.set(names.session, firstToken);
      await expectSignedOut(replay);
      const fixated = new TestClient(app.url);
      fixated.cookies.set(names.session, planted);
      await expectSignedOut(fixated);
    });

    it('is worthless after sign-out, even copied into another client', async () => {
      const client = await app.client('viewer');
      const token = client.cookies.get(names.session) ?? '';
      expect(await sessionRows(app, token)).toBe(1);
      const copy = new TestClient(app.url);
      copy.cookies.set(names.session, token);
      expect((await copy.get('/competitors')).status).toBe(200);

      const response = await client.postForm('/logout', {});
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toBe('/login');
      expect(client.cookies.has(names.session)).toBe(false);
      expect(await sessionRows(app, token)).toBe(0);

      const stolen = new TestClient(app.url);
      stolen.cookies.set(names.session, token);
      await expectSignedOut(stolen);
      await expectSignedOut(copy);
      await expectSignedOut(client);
    });

    it('uses __Host- names and Secure cookies behind a TLS proxy (TRUST_PROXY)', async () => {
      expect(cookieNames(true)).toEqual({
        session: '__Host-rivals_session',
        anon: '__Host-rivals_anon',
        flash: '__Host-rivals_flash',
      });
      expect(cookieNames(false)).toEqual({
        session: 'rivals_session',
        anon: 'rivals_anon',
        flash: 'rivals_flash',
      });

      // The real app over the same runtime, configured as it is behind a TLS-terminating proxy.
      const httpsNames = cookieNames(true);
      const secureApp = createApp(
        {
          ...app.runtime,
          config: { ...app.runtime.config, TRUST_PROXY: true, METRICS_TOKEN: 'm'.repeat(32) },
          assets: await loadAssets(assetsDir),
          sessionSecret: TEST_SESSION_SECRET,
          sessions: { db: app.db.pool, secret: TEST_SESSION_SECRET, https: true, cookies: httpsNames },
          loginLimiter: createLoginLimiter(undefined, 'test-https:'),
          searchPages: createSearchPageCache(),
        },
        createMetrics(),
      );
      const server: Server = createServer(secureApp.callback());
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = server.address() as AddressInfo;
        const url = `http://127.0.0.1:${port}`;
        const proxied = { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'rivals.example' };
        const jar = new Map<string, string>();
        const keep = (response: Response) => {
          for (const line of response.headers.getSetCookie()) {
            const [pair = ''] = line.split(';');
            const at = pair.indexOf('=');
            jar.set(pair.slice(0, at), pair.slice(at + 1));
          }
        };
        const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');

        const page = await fetch(`${url}/login`, { headers: proxied, redirect: 'manual' });
        expect(page.status).toBe(200);
        expect(page.headers.get('strict-transport-security')).toContain('max-age=31536000');
        const anonLine = sessionSetCookie(page, httpsNames.anon) ?? '';
        expect(anonLine.toLowerCase()).toMatch(/; secure/);
        expect(anonLine.toLowerCase()).toMatch(/; path=\//);
        keep(page);
        const token = /<meta name="csrf-token" content="([^"]+)"/.exec(await page.text())?.[1] ?? '';
        expect(token).not.toBe('');

        const signInFrom = (origin: string) =>
          fetch(`${url}/login`, {
            method: 'POST',
            headers: {
              ...proxied,
              Origin: origin,
              Cookie: cookie(),
              'Content-Type': 'application/x-www-form-urlencoded',
            },
            body: new URLSearchParams({ email: testEmails.viewer, password: TEST_PASSWORD, _csrf: token }),
            redirect: 'manual',
          });
        // The same host over plain http is another origin: a page served there cannot post here.
        const downgraded = await signInFrom('http://rivals.example');
        expect(downgraded.status).toBe(403);
        expect(sessionSetCookie(downgraded, httpsNames.session)).toBeUndefined();
        const signIn = await signInFrom('https://rivals.example');
        expect(signIn.status).toBe(302);
        const line = sessionSetCookie(signIn, httpsNames.session) ?? '';
        const attributes = line.split(';').map((part) => part.trim().toLowerCase());
        expect(attributes).toEqual(expect.arrayContaining(['secure', 'httponly', 'samesite=lax', 'path=/']));
        expect(attributes.some((a) => a.startsWith('domain='))).toBe(false);
        keep(signIn);
        expect(jar.get(httpsNames.session)).toMatch(/^[\w-]{40,}$/);

        const list = await fetch(`${url}/competitors`, {
          headers: { ...proxied, Cookie: cookie() },
          redirect: 'manual',
        });
        expect(list.status).toBe(200);
        // The plain-http name is not a way in to the https app.
        const plainName = await fetch(`${url}/competitors`, {
          headers: { ...proxied, Cookie: `${names.session}=${jar.get(httpsNames.session)}` },
          redirect: 'manual',
        });
        expect(plainName.status).toBe(302);

        // Requests that reach the instance directly (health checks, scrapes, a proxy that sends no
        // X-Forwarded-Proto) still work, and any cookie they get is still Secure.
        for (const path of ['/healthz', '/metrics', '/login']) {
          const direct = await fetch(`${url}${path}`, {
            redirect: 'manual',
            headers: path === '/metrics' ? { Authorization: `Bearer ${'m'.repeat(32)}` } : {},
          });
          expect(direct.status, path).toBe(200);
          for (const line of direct.headers.getSetCookie()) {
            expect(line, path).toMatch(/^__Host-/);
            expect(line.toLowerCase(), path).toMatch(/; secure/);
          }
        }
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });

  describe('a disabled or demoted user', () => {
    async function userChanged(id: string, check: (row: { disabled: boolean; role: string }) => boolean) {
      await waitFor(async () => {
        const { rows } = await app.db.pool.query<{ disabled: boolean; role: string }>(
          'SELECT disabled, role FROM user_list WHERE id = $1',
          [id],
        );
        return !!rows[0] && check(rows[0]);
      }, `user ${id} to change`);
    }

    it('loses a live session at once when an admin disables the account', async () => {
      const editor = await newUser(app, 'editor', 'disabled-editor');
      const client = await signedIn(app, editor.email);
      const token = client.cookies.get(names.session) ?? '';
      expect((await client.get('/competitors/new')).status).toBe(200);
      expect(await sessionRows(app, token)).toBe(1);

      expect((await admin.get('/users')).status).toBe(200);
      const disable = await admin.postForm(`/users/${editor.id}/disable`, {});
      expect(disable.status).toBe(302);
      expect(disable.headers.get('location')).toBe('/users');

      await expectSignedOut(client);
      expect(await sessionRows(app, token)).toBe(0);
      // ...and cannot come back with the right password.
      const again = new TestClient(app.url);
      await again.get('/login');
      const response = await again.postForm('/login', { email: editor.email, password: TEST_PASSWORD });
      expect(response.status).toBe(401);
      expect(await response.text()).toContain('Email or password is incorrect.');
      expect(sessionSetCookie(response)).toBeUndefined();
    });

    it('loses a live session once the account is disabled by any path (the flag is re-read per request)', async () => {
      const editor = await newUser(app, 'editor', 'cli-disabled-editor');
      const client = await signedIn(app, editor.email);
      const token = client.cookies.get(names.session) ?? '';
      expect((await client.get('/competitors')).status).toBe(200);

      // Straight through the command handler, as the CLI would: nothing deletes the session row here.
      const disable: Command = { type: 'DisableUser', payload: { userId: editor.id } };
      expect((await app.runtime.route(envelope(disable))).status).toBe('accepted');
      await userChanged(editor.id, (row) => row.disabled);
      expect(await sessionRows(app, token)).toBe(1);

      await expectSignedOut(client);
      expect(await sessionRows(app, token)).toBe(0);
    });

    it('does not get a session back when the account is enabled again', async () => {
      const editor = await newUser(app, 'editor', 'reenabled-editor');
      // A cookie the user no longer holds (a lost laptop): the reason the account was disabled.
      const lost = await signedIn(app, editor.email);
      const token = lost.cookies.get(names.session) ?? '';
      expect((await lost.get('/competitors')).status).toBe(200);

      // Disabled by a path that leaves the row (as above), and the cookie not used while disabled.
      const disable: Command = { type: 'DisableUser', payload: { userId: editor.id } };
      expect((await app.runtime.route(envelope(disable))).status).toBe('accepted');
      await userChanged(editor.id, (row) => row.disabled);
      expect(await sessionRows(app, token)).toBe(1);

      expect((await admin.get('/users')).status).toBe(200);
      const enable = await admin.postForm(`/users/${editor.id}/enable`, {});
      expect(enable.status).toBe(302);
      await userChanged(editor.id, (row) => !row.disabled);

      expect(await sessionRows(app, token)).toBe(0);
      await expectSignedOut(lost);
      // The user signs in again as usual.
      expect((await (await signedIn(app, editor.email)).get('/competitors')).status).toBe(200);
    });

    it('keeps the sessions signed in since an enable when an older disable is sent again (same key)', async () => {
      const editor = await newUser(app, 'editor', 'replayed-disable');
      expect((await admin.get('/users')).status).toBe(200);
      const key = randomUUID();
      const disable = () => admin.postForm(`/users/${editor.id}/disable`, { _idempotency_key: key });
      expect((await disable()).status).toBe(302);
      await userChanged(editor.id, (row) => row.disabled);
      expect((await admin.postForm(`/users/${editor.id}/enable`, {})).status).toBe(302);
      await userChanged(editor.id, (row) => !row.disabled);
      const client = await signedIn(app, editor.email);
      const token = client.cookies.get(names.session) ?? '';
      expect((await client.get('/competitors')).status).toBe(200);

      // The first disable's answer was lost and the same request arrives again: it gets the first outcome,
      // and must not end a session the (since re-enabled) user signed in to after it.
      const retry = await disable();
      expect(retry.status).toBe(302);
      expect(await sessionRows(app, token)).toBe(1);
      expect((await client.get('/competitors')).status).toBe(200);
    });

    it('says the account is disabled when only ending its sessions failed (not "nothing was changed")', async () => {
      const editor = await newUser(app, 'editor', 'disable-sessions-refused');
      const client = await signedIn(app, editor.email);
      expect((await client.get('/competitors')).status).toBe(200);
      // The database refuses the deletion of sessions only, as a full disk does (decision 0012).
      await app.db.pool.query(`
        CREATE FUNCTION refuse_session_delete() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$`);
      await app.db.pool.query(
        'CREATE TRIGGER refuse BEFORE DELETE ON sessions FOR EACH ROW EXECUTE FUNCTION refuse_session_delete()',
      );
      try {
        expect((await admin.get('/users')).status).toBe(200);
        const disable = await admin.postForm(`/users/${editor.id}/disable`, {});
        expect(disable.status).toBe(302);
        expect(disable.headers.get('location')).toBe('/users');
        expect(await (await admin.get('/users')).text()).toContain(
          'Throwaway disable-sessions-refused is disabled.',
        );
      } finally {
        await app.db.pool.query('DROP TRIGGER refuse ON sessions');
        await app.db.pool.query('DROP FUNCTION refuse_session_delete()');
      }
      await userChanged(editor.id, (row) => row.disabled);
      // Its session still ends: every request re-reads the account's disabled flag.
      await expectSignedOut(client);
    });

    it('gets the new role on the next request after a demotion', async () => {
      const editor = await newUser(app, 'editor', 'demoted-editor');
      const client = await signedIn(app, editor.email);
      expect((await client.get('/competitors/new')).status).toBe(200);

      const demote: Command = { type: 'ChangeUserRole', payload: { userId: editor.id, role: 'viewer' } };
      expect((await app.runtime.route(envelope(demote))).status).toBe('accepted');
      await userChanged(editor.id, (row) => row.role === 'viewer');

      expect((await client.get('/competitors/new')).status).toBe(403);
      expect((await client.get('/competitors')).status).toBe(200);
    });
  });

  describe('where sign-in sends you next (no open redirect)', () => {
    const cases: [next: string, location: string][] = [
      ['//evil.example', '/competitors'],
      ['https://evil.example', '/competitors'],
      ['/\\evil', '/competitors'],
      ['/\t/evil.example', '/competitors'],
      ['/users?x=1', '/users?x=1'],
    ];

    it('honours only same-site paths', async () => {
      const client = new TestClient(app.url);
      await client.get('/login');
      for (const [next, location] of cases) {
        const response = await client.postForm('/login', {
          email: testEmails.admin,
          password: TEST_PASSWORD,
          next,
        });
        expect(response.status, JSON.stringify(next)).toBe(302);
        expect(response.headers.get('location'), JSON.stringify(next)).toBe(location);
        // A signed-in visit to /login?next=… follows the same rule.
        const visit = await client.get(`/login?next=${encodeURIComponent(next)}`);
        expect(visit.status, JSON.stringify(next)).toBe(302);
        expect(visit.headers.get('location'), JSON.stringify(next)).toBe(location);
        expect((await client.get('/competitors')).status).toBe(200); // the next sign-in's token
      }
    });
  });
});
