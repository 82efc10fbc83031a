import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookieNames, hmac } from '#web/auth/cookies.server.ts';
import { freshUser, messageOf } from '#tests/security/support/helpers.ts';
import {
  securityBackends,
  startSecurityApp,
  type SecurityApp,
} from '#tests/security/support/security-app.ts';
import { TEST_PASSWORD } from '#tests/support/test-app.ts';
import { TestClient } from '#tests/support/test-client.ts';

/*
 * A retry is normal, and so is a second tab. A sign-in form sent again after its first answer's cookie
 * arrived (a slow double click, a browser retrying the POST), a sign-in form left open in a second tab
 * while the first signed in (or in and out), and a Sign out sent twice all answered 403 "Your session
 * form token is missing or out of date. Reload the page and try again.": the sign-in replaces the cookie
 * the form's token was derived from (decision 0027). Now the same sign-in again lands where the first
 * did, a stale sign-in form comes back fresh with the email kept, and a second Sign out lands signed out.
 */

const SECRET = 's'.repeat(40); // the security app's session secret
const names = cookieNames(false);
const rowId = (token: string) => hmac(SECRET, `session:${token}`);
const STALE = 'Your sign-in page was out of date. Sign in again.';

describe.each(securityBackends)('sign-in and sign-out sent again, on %s', (backend) => {
  let app: SecurityApp;

  beforeAll(async () => {
    app = await startSecurityApp(backend);
  });
  afterAll(() => app.close());

  const sessionsOf = async (userId: string) => {
    const { rows } = await app.db.pool.query<{ id: string }>('SELECT id FROM sessions WHERE user_id = $1', [
      userId,
    ]);
    return rows.map((row) => row.id).sort();
  };
  const tokenOf = (client: TestClient) => client.cookies.get(names.session) ?? '';
  /** A user signed out, and a browser on the sign-in page (`tabs` pages of it, as tabs hold them). */
  const signedOutOnTheForm = async (label: string, tabs = 1) => {
    const user = await freshUser(app, 'viewer', label);
    expect((await user.client.postForm('/logout', {})).status).toBe(302);
    const forms = [];
    for (let i = 0; i < tabs; i += 1) {
      const html = await (await user.client.get('/login?next=%2Fusers%3Fx%3D1')).text();
      const key = /name="_idempotency_key" value="([^"]+)"/.exec(html)?.[1] ?? '';
      expect(key).toMatch(/^[0-9a-f-]{36}$/);
      forms.push({ csrf: user.client.csrfToken, key });
    }
    return { ...user, forms };
  };
  const fields = (email: string, key: string, password = TEST_PASSWORD) => ({
    email,
    password,
    next: '/ranking',
    _idempotency_key: key,
  });
  /** Signs in from `form` (tab one), opens a page, and signs out again. */
  const signInAndOut = async (
    user: Awaited<ReturnType<typeof signedOutOnTheForm>>,
    form: { csrf: string; key: string },
  ) => {
    expect(
      (await user.client.postForm('/login', fields(user.email, form.key), { csrf: form.csrf })).status,
    ).toBe(302);
    await user.client.get('/competitors');
    expect((await user.client.postForm('/logout', {})).status).toBe(302);
  };
  const expectSignedInAs = async (client: TestClient, userId: string) => {
    const answer = await client.get('/session', { headers: { Accept: 'application/json' } });
    expect(((await answer.json()) as { userId: string | null }).userId).toBe(userId);
  };

  it('the same sign-in sent again after its answer arrived (slow double click, retried POST) lands where the first did: no 403, one session', async () => {
    const user = await signedOutOnTheForm('slow-double');
    const [form] = user.forms;
    if (!form) throw new Error('no form');
    const first = await user.client.postForm('/login', fields(user.email, form.key), { csrf: form.csrf });
    expect(first.status).toBe(302);
    const token = tokenOf(user.client);

    // The second click leaves with the cookies the first answer set, and the form's old token.
    const again = await user.client.postForm('/login', fields(user.email, form.key), { csrf: form.csrf });

    expect(again.status, await messageOf(again.clone())).toBe(302);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(tokenOf(user.client)).toBe(token);
    expect(await sessionsOf(user.id)).toEqual([rowId(token)]);
    await expectSignedInAs(user.client, user.id);
  });

  it('a second tab’s sign-in form sent after the first tab signed in as the same user takes the user where it was going', async () => {
    const user = await signedOutOnTheForm('second-tab-same', 2);
    const [one, two] = user.forms;
    if (!one || !two) throw new Error('no forms');
    expect(
      (await user.client.postForm('/login', fields(user.email, one.key), { csrf: one.csrf })).status,
    ).toBe(302);
    const token = tokenOf(user.client);

    // The email as typed in the other tab: other case, spaces around it.
    const tab2 = await user.client.postForm(
      '/login',
      { ...fields(` ${user.email.toUpperCase()} `, two.key), next: '/segments' },
      { csrf: two.csrf },
    );

    expect(tab2.status, await messageOf(tab2.clone())).toBe(302);
    expect(tab2.headers.get('location')).toBe('/segments');
    expect(await sessionsOf(user.id)).toEqual([rowId(token)]);
  });

  it('a second tab’s sign-in form naming someone else, after the first tab signed in, comes back fresh: email kept, no password, nobody switched', async () => {
    const user = await signedOutOnTheForm('second-tab-other', 2);
    const other = await freshUser(app, 'viewer', 'second-tab-target');
    const [one, two] = user.forms;
    if (!one || !two) throw new Error('no forms');
    expect(
      (await user.client.postForm('/login', fields(user.email, one.key), { csrf: one.csrf })).status,
    ).toBe(302);
    const otherSessions = await sessionsOf(other.id);

    const tab2 = await user.client.postForm('/login', fields(other.email, two.key), { csrf: two.csrf });

    expect(tab2.status).toBe(403);
    const html = await tab2.text();
    expect(html).toContain(STALE);
    expect(html).toContain(`value="${other.email}"`);
    expect(html).not.toContain(TEST_PASSWORD);
    await expectSignedInAs(user.client, user.id);
    expect(await sessionsOf(other.id)).toEqual(otherSessions);
    // The form it came back with works: the browser switches to the other user.
    const fresh = /name="_idempotency_key" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const retry = await user.client.postForm('/login', fields(other.email, fresh));
    expect(retry.status).toBe(302);
    await expectSignedInAs(user.client, other.id);
  });

  it('a second tab’s sign-in form sent after the first tab signed in and out comes back fresh, signs nobody in, and its fresh form signs in', async () => {
    const user = await signedOutOnTheForm('second-tab-out', 2);
    const [one, two] = user.forms;
    if (!one || !two) throw new Error('no forms');
    await signInAndOut(user, one);

    const tab2 = await user.client.postForm('/login', fields(user.email, two.key), { csrf: two.csrf });

    expect(tab2.status).toBe(403);
    const html = await tab2.text();
    expect(html).toContain(STALE);
    expect(html).toContain(`value="${user.email}"`);
    expect(html).toContain('value="/ranking"'); // where it was going, kept
    expect(html).not.toContain(TEST_PASSWORD);
    expect(tokenOf(user.client)).toBe('');
    expect(await sessionsOf(user.id)).toEqual([]);
    const fresh = /name="_idempotency_key" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const retry = await user.client.postForm('/login', fields(user.email, fresh));
    expect(retry.status).toBe(302);
    expect(retry.headers.get('location')).toBe('/ranking');
  });

  it('a stale sign-in sent as a call (XHR) is told the same in JSON, and signs nobody in', async () => {
    const user = await signedOutOnTheForm('stale-xhr', 2);
    const [one, two] = user.forms;
    if (!one || !two) throw new Error('no forms');
    await signInAndOut(user, one);

    const call = await user.client.postJson('/login', fields(user.email, two.key), { csrf: two.csrf });

    expect(call.status).toBe(403);
    expect(await call.json()).toEqual({ error: { code: 'forbidden', message: STALE } });
    expect(await sessionsOf(user.id)).toEqual([]);
  });

  it('a Sign out sent twice (double click, second tab) lands signed out both times', async () => {
    const user = await freshUser(app, 'viewer', 'double-sign-out');
    await user.client.get('/competitors');
    const pageToken = user.client.csrfToken;
    const browser = user.client.cookieHeader();
    const first = await user.client.postForm('/logout', {}, { csrf: pageToken });
    expect(first.status).toBe(302);
    expect(first.headers.get('location')).toBe('/login');

    const second = await user.client.postForm('/logout', {}, { csrf: pageToken });
    expect(second.status).toBe(302);
    expect(second.headers.get('location')).toBe('/login');
    // A retry whose first answer was lost still carries the ended session's cookie.
    const retried = await fetch(`${app.url}/logout`, {
      method: 'POST',
      headers: { Cookie: browser, Origin: app.url, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: pageToken }),
      redirect: 'manual',
    });
    expect(retried.status).toBe(302);
    expect(retried.headers.get('location')).toBe('/login');
    expect(await sessionsOf(user.id)).toEqual([]);
  });

  it('still refuses a sign-in form that is not this browser’s own (another browser’s token, garbage) or comes from another site', async () => {
    const user = await signedOutOnTheForm('not-own', 1);
    const [form] = user.forms;
    if (!form) throw new Error('no form');
    expect(
      (await user.client.postForm('/login', fields(user.email, form.key), { csrf: form.csrf })).status,
    ).toBe(302);
    await user.client.get('/competitors');
    expect((await user.client.postForm('/logout', {})).status).toBe(302);
    const elsewhere = new TestClient(app.url);
    await elsewhere.get('/login');
    for (const csrf of [elsewhere.csrfToken, 'x'.repeat(43)]) {
      const refused = await user.client.postForm('/login', fields(user.email, form.key), { csrf });
      expect(refused.status).toBe(403);
      expect(await messageOf(refused)).toContain('Your session form token is missing or out of date.');
    }
    // The browser's own stale form, but sent from another site's page: the origin rule comes first.
    const forged = await user.client.postForm('/login', fields(user.email, form.key), {
      csrf: form.csrf,
      origin: 'https://evil.example',
    });
    expect(forged.status).toBe(403);
    expect(await messageOf(forged)).toContain('This request came from another site and was blocked.');
    expect(tokenOf(user.client)).toBe('');
    expect(await sessionsOf(user.id)).toEqual([]);
  });
});
