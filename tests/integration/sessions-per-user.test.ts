import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookieNames, hmac } from '#web/auth/cookies.server.ts';
import { freshUser } from '#tests/security/support/helpers.ts';
import {
  disconnection,
  handshakeResult,
  securityBackends,
  startSecurityApp,
  type SecurityApp,
} from '#tests/security/support/security-app.ts';
import { TEST_PASSWORD } from '#tests/support/test-app.ts';
import { TestClient } from '#tests/support/test-client.ts';

/*
 * Sessions per user were uncapped: every sign-in (a person's, or a script's holding the password) added a
 * row kept until its end. A sign-in beyond SESSIONS_PER_USER now ends the user's least recently used
 * session, its open pages' sockets included (decision 0027). And a sign-in a browser sent twice (a double
 * click, a retried POST) left two sessions, one held by nobody: both answers now carry the same session.
 */

const CAP = 3;
/** The security app's session secret (tests/security/support/security-app.ts). */
const SECRET = 's'.repeat(40);
const names = cookieNames(false);
const rowId = (token: string) => hmac(SECRET, `session:${token}`);

describe.each(securityBackends)('sessions per user, on %s', (backend) => {
  let app: SecurityApp;

  beforeAll(async () => {
    app = await startSecurityApp(backend, { env: { SESSIONS_PER_USER: String(CAP) } });
  });
  afterAll(() => app.close());

  const sessionsOf = async (userId: string) => {
    const { rows } = await app.db.pool.query<{ id: string }>('SELECT id FROM sessions WHERE user_id = $1', [
      userId,
    ]);
    return rows.map((row) => row.id).sort();
  };
  const tokenOf = (client: TestClient) => client.cookies.get(names.session) ?? '';
  /**
   * Sets when a client's session was signed in and last used. Its user's password dates from before
   * (a session signed in before its password was stored is over).
   */
  const age = async (client: TestClient, createdHoursAgo: number, lastSeenHoursAgo: number) => {
    await app.db.pool.query(
      `UPDATE user_credentials SET updated_at = now() - interval '1 day'
       WHERE user_id = (SELECT user_id FROM sessions WHERE id = $1)`,
      [rowId(tokenOf(client))],
    );
    await app.db.pool.query(
      `UPDATE sessions SET created_at = now() - make_interval(hours => $2),
                           last_seen_at = now() - make_interval(hours => $3) WHERE id = $1`,
      [rowId(tokenOf(client)), createdHoursAgo, lastSeenHoursAgo],
    );
  };
  const signedIn = async (email: string) => {
    const client = new TestClient(app.url);
    await client.signIn(email, TEST_PASSWORD);
    return client;
  };
  const expectSignedOut = async (client: TestClient) => {
    const page = await client.get('/competitors');
    expect(page.status).toBe(302);
    expect(page.headers.get('location')).toBe('/login?next=%2Fcompetitors');
  };
  /** The sign-in form as a browser holds it: its form token and its key. */
  const signInForm = async (client: TestClient) => {
    const html = await (await client.get('/login')).text();
    const key = /name="_idempotency_key" value="([^"]+)"/.exec(html)?.[1] ?? '';
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    return { csrf: client.csrfToken, key };
  };

  it('a sign-in beyond the cap ends the least recently used session: its page is signed out, its socket closes', async () => {
    const user = await freshUser(app, 'editor', 'capped');
    const daily = user.client; // signed in first, but used all the time
    const forgotten = await signedIn(user.email);
    const recent = await signedIn(user.email);
    await age(daily, 5, 0);
    await age(forgotten, 4, 3);
    await age(recent, 2, 1);
    const socket = app.socket({ cookie: forgotten.cookieHeader() });
    expect((await handshakeResult(socket)).connected).toBe(true);
    const closed = disconnection(socket);

    const newest = await signedIn(user.email);

    // Closed by the sign-in's signal: its own re-check timer is a minute away, past this test's timeout.
    expect(await closed).toEqual(expect.objectContaining({ reason: 'io server disconnect', told: true }));
    await expectSignedOut(forgotten);
    expect(await sessionsOf(user.id)).toEqual(
      [daily, recent, newest].map((client) => rowId(tokenOf(client))).sort(),
    );
    for (const client of [daily, recent, newest]) expect((await client.get('/competitors')).status).toBe(200);
  });

  it('sessions already ended (idle or past their end) do not count, and go', async () => {
    const user = await freshUser(app, 'viewer', 'dead-rows');
    const idle = user.client;
    const expired = await signedIn(user.email);
    const live = await signedIn(user.email);
    await age(idle, 14, 13); // 12 hours without a request
    await app.db.pool.query(`UPDATE sessions SET expires_at = now() - interval '1 minute' WHERE id = $1`, [
      rowId(tokenOf(expired)),
    ]);

    const newest = await signedIn(user.email);

    expect(await sessionsOf(user.id)).toEqual([live, newest].map((client) => rowId(tokenOf(client))).sort());
    expect((await live.get('/competitors')).status).toBe(200);
  });

  it('never ends a user’s sessions for another user’s sign-ins', async () => {
    const one = await freshUser(app, 'viewer', 'one');
    const other = await freshUser(app, 'viewer', 'other');
    for (let i = 0; i < CAP; i += 1) await signedIn(other.email);
    expect((await one.client.get('/competitors')).status).toBe(200);
    expect(await sessionsOf(other.id)).toHaveLength(CAP);
  });

  it('a sign-in the browser sends twice (double click, retried POST) leaves one session, the cookie both answers set', async () => {
    const user = await freshUser(app, 'viewer', 'double-click');
    expect((await user.client.postForm('/logout', {})).status).toBe(302);
    const form = await signInForm(user.client);
    const fields = { email: user.email, password: TEST_PASSWORD, _idempotency_key: form.key };
    // Both leave before either answers: they carry the same cookies.
    const browser = user.client.cookieHeader();
    const send = () =>
      fetch(`${app.url}/login`, {
        method: 'POST',
        headers: {
          Cookie: browser,
          Origin: app.url,
          'Content-Type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ ...fields, _csrf: form.csrf }),
        redirect: 'manual',
      });
    const answers = await Promise.all([send(), send()]);
    const tokens = answers.map((answer) => {
      expect(answer.status).toBe(302);
      const line = answer.headers.getSetCookie().find((l) => l.startsWith(`${names.session}=`)) ?? '';
      return line.slice(names.session.length + 1).split(';')[0] ?? '';
    });
    expect(tokens[0]).toMatch(/^[\w-]{40,}$/);
    expect(tokens[1]).toBe(tokens[0]);
    expect(await sessionsOf(user.id)).toEqual([rowId(tokens[0] ?? '')]);
    const client = new TestClient(app.url);
    client.cookies.set(names.session, tokens[0] ?? '');
    expect((await client.get('/competitors')).status).toBe(200);
  });

  it('the same sign-in form sent again after signing out does not bring the signed-out cookie back', async () => {
    const user = await freshUser(app, 'viewer', 'resubmit');
    expect((await user.client.postForm('/logout', {})).status).toBe(302);
    const form = await signInForm(user.client);
    const fields = { email: user.email, password: TEST_PASSWORD, _idempotency_key: form.key };
    expect((await user.client.postForm('/login', fields, { csrf: form.csrf })).status).toBe(302);
    const first = tokenOf(user.client);
    await user.client.get('/competitors');
    expect((await user.client.postForm('/logout', {})).status).toBe(302);

    // The page from before, sent again as it was (the back button, a resubmit).
    await user.client.postForm('/login', fields, { csrf: form.csrf });
    const copy = new TestClient(app.url);
    copy.cookies.set(names.session, first);
    await expectSignedOut(copy);
    expect(await sessionsOf(user.id)).not.toContain(rowId(first));
  });
});
