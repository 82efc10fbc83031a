import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkPassword, createAccount } from '#services/user/accounts.ts';
import { freshUser, passwordChanges, waitFor } from '#tests/security/support/helpers.ts';
import {
  securityBackends,
  startSecurityApp,
  type SecurityApp,
} from '#tests/security/support/security-app.ts';
import { envelope } from '#tests/support/runtime-pieces.ts';
import { TEST_PASSWORD } from '#tests/support/test-app.ts';
import { TestClient } from '#tests/support/test-client.ts';

/**
 * A review of /account (helper-62): the same form key used again after its change was made, the signed-out
 * retry's answer as a password oracle, the whole input space of the form, and the page for every role.
 */
// scrypt at 128 MiB a hash, several a test, on a shared two-core machine: a bound on waiting, not on time.
vi.setConfig({ testTimeout: 240_000 });

describe.each(securityBackends)('changing your own password, reviewed, on %s', (backend) => {
  let app: SecurityApp;
  const NEW_PASSWORD = 'my-own-new-password-1';
  const THIRD_PASSWORD = 'a-third-password-of-mine';

  beforeAll(async () => {
    app = await startSecurityApp(backend);
  });
  afterAll(() => app.close());

  const changes = (userId: string) => passwordChanges(app, userId);

  const form = (fields: Record<string, string> = {}) => ({
    currentPassword: TEST_PASSWORD,
    newPassword: NEW_PASSWORD,
    repeatPassword: NEW_PASSWORD,
    _idempotency_key: randomUUID(),
    ...fields,
  });

  it('a form whose key already made a change, sent again later with another new password, is refused: no password is stored without its recorded change', async () => {
    const user = await freshUser(app, 'viewer', 'reused-key');
    await user.client.get('/account');
    const first = form();
    expect((await user.client.postForm('/account/password', first)).status).toBe(302);
    await user.client.get('/account');
    // The same key (a page kept open, a back button, a script), now with the right current password.
    const reused = await user.client.postForm('/account/password', {
      ...first,
      currentPassword: NEW_PASSWORD,
      newPassword: THIRD_PASSWORD,
      repeatPassword: THIRD_PASSWORD,
    });
    const storedThird = await checkPassword(app.db.pool, user.id, THIRD_PASSWORD);
    // Either a change that is recorded (and audited), or none: never a silent one.
    expect({ storedThird, changes: await changes(user.id) }).toEqual({ storedThird: false, changes: 1 });
    expect(reused.status).toBe(400);
    expect(await reused.text()).toContain('This form already changed your password');
    expect(await checkPassword(app.db.pool, user.id, NEW_PASSWORD)).toBe(true);

    // A fresh form (the page as shown again) makes that change, recorded.
    await user.client.get('/account');
    const fresh = await user.client.postForm(
      '/account/password',
      form({ currentPassword: NEW_PASSWORD, newPassword: THIRD_PASSWORD, repeatPassword: THIRD_PASSWORD }),
    );
    expect(fresh.status).toBe(302);
    expect(await changes(user.id)).toBe(2);
    expect(await checkPassword(app.db.pool, user.id, THIRD_PASSWORD)).toBe(true);
  });

  it('a change whose outcome comes back late is never called received while nothing will finish it: the same form (its key kept) sent again finishes it, recorded once', async () => {
    const user = await freshUser(app, 'viewer', 'late');
    await user.client.get('/account');
    // The worker's answer is lost on the way back: the command is dispatched for real and recorded.
    const { gateway } = app.runtime;
    const dispatch = gateway.dispatch.bind(gateway);
    const lost = vi
      .spyOn(gateway, 'dispatch')
      .mockImplementation(async (...args) => ({ ...(await dispatch(...args)), outcome: undefined }));
    const sent = form();
    let answer: Response;
    try {
      answer = await user.client.postForm('/account/password', sent);
    } finally {
      lost.mockRestore();
    }
    await waitFor(async () => (await changes(user.id)) === 1, 'the change recorded by the worker');
    // Recorded, but the hash is stored only by a request that hears it accepted: not yet changed.
    expect(await checkPassword(app.db.pool, user.id, TEST_PASSWORD)).toBe(true);
    const page = answer.status === 302 ? await user.client.get('/account') : answer;
    const text = await page.text();
    expect(text).not.toContain('Reload in a moment to see it');
    expect(text).toContain('Your password is not changed yet');
    // The form shown again keeps its key: sent again with the same passwords, it finishes that change.
    const key = /name="_idempotency_key" value="([^"]+)"/.exec(text)?.[1];
    expect(key).toBe(sent._idempotency_key);
    const again = await user.client.postForm('/account/password', sent);
    expect(again.status).toBe(302);
    expect(await checkPassword(app.db.pool, user.id, NEW_PASSWORD)).toBe(true);
    expect(await changes(user.id)).toBe(1);
  });

  it('the same form sent twice at once (a double click) makes one change and both answers say it was made', async () => {
    const user = await freshUser(app, 'viewer', 'double-click');
    await user.client.get('/account');
    const sent = form();
    const headers = {
      Cookie: user.client.cookieHeader(),
      Origin: app.url,
      'Content-Type': 'application/x-www-form-urlencoded',
    };
    const send = () =>
      fetch(`${app.url}/account/password`, {
        method: 'POST',
        headers,
        body: new URLSearchParams({ ...sent, _csrf: user.client.csrfToken }),
        redirect: 'manual',
      });
    const answers = await Promise.all([send(), send()]);
    for (const answer of answers) {
      expect(answer.status).toBe(302);
      expect(answer.headers.get('location')).toMatch(/^\/(account|login\?next=%2Faccount)$/);
    }
    expect(await changes(user.id)).toBe(1);
    expect(await checkPassword(app.db.pool, user.id, NEW_PASSWORD)).toBe(true);
  });

  it("the signed-out retry's answer counts its guesses of the new password with the sign-in limits", async () => {
    const user = await freshUser(app, 'viewer', 'stale-oracle');
    await user.client.get('/account');
    const sent = form();
    expect((await user.client.postForm('/account/password', sent)).status).toBe(302);
    // Someone without a session who holds that form's key guesses the password it set.
    const stranger = new TestClient(app.url);
    const guess = (newPassword: string) =>
      stranger.postForm(
        '/account/password',
        { ...sent, newPassword, repeatPassword: newPassword },
        { csrf: 'not-a-token' },
      );
    for (let i = 0; i < 5; i++) expect((await guess(`wrong-guess-number-${i}`)).status).not.toBe(302);
    const right = await guess(NEW_PASSWORD);
    // The sixth guess in a minute is not checked: no answer tells that it was right.
    expect(right.status).not.toBe(302);
    expect(await checkPassword(app.db.pool, user.id, NEW_PASSWORD)).toBe(true);
  });

  it('a right current password takes back the wrong ones before it, as a sign-in does', async () => {
    const user = await freshUser(app, 'viewer', 'counted');
    await user.client.get('/account');
    const wrong = () =>
      user.client.postForm('/account/password', form({ currentPassword: 'not-mine-at-all' }));
    for (let i = 0; i < 4; i++) expect((await wrong()).status).toBe(400);
    expect((await user.client.postForm('/account/password', form())).status).toBe(302);
    await user.client.get('/account');
    // Counted from nothing again: without that, the next wrong one would be the sixth in a minute (429).
    for (let i = 0; i < 2; i++) expect((await wrong()).status).toBe(400);
  });

  it('every malformed form (missing, arrays, objects, JSON, XHR, control characters, huge, bad key) changes nothing and gets no 500', async () => {
    const user = await freshUser(app, 'viewer', 'malformed');
    await user.client.get('/account');
    const post = (body: string, contentType: string, headers: Record<string, string> = {}) =>
      fetch(`${app.url}/account/password`, {
        method: 'POST',
        headers: {
          Cookie: user.client.cookieHeader(),
          Origin: app.url,
          'Content-Type': contentType,
          'X-CSRF-Token': user.client.csrfToken,
          ...headers,
        },
        body,
        redirect: 'manual',
      });
    const urlencoded = 'application/x-www-form-urlencoded';
    const q = (fields: Record<string, string | string[]>) => {
      const body = new URLSearchParams();
      for (const [name, value] of Object.entries(fields))
        for (const one of [value].flat()) body.append(name, one);
      return body.toString();
    };
    const k = () => randomUUID();
    const cases: [string, Response][] = [];
    const add = async (label: string, response: Promise<Response>) => cases.push([label, await response]);
    await add('nothing', post('', urlencoded));
    await add('no current', post(q({ newPassword: NEW_PASSWORD, repeatPassword: NEW_PASSWORD }), urlencoded));
    await add(
      'no repeat',
      post(q({ currentPassword: TEST_PASSWORD, newPassword: NEW_PASSWORD }), urlencoded),
    );
    await add(
      'current twice',
      post(q({ ...form(), currentPassword: [TEST_PASSWORD, TEST_PASSWORD] }), urlencoded),
    );
    await add('new twice', post(q({ ...form(), newPassword: [NEW_PASSWORD, NEW_PASSWORD] }), urlencoded));
    await add('garbage key', post(q({ ...form(), _idempotency_key: 'not-a-uuid' }), urlencoded));
    // Read as no key, it would be made without the protection of one: refused like a garbage key.
    await add('key twice', post(q({ ...form(), _idempotency_key: [k(), k()] }), urlencoded));
    await add(
      'json numbers',
      post(
        JSON.stringify({ currentPassword: 1, newPassword: 123456789012, repeatPassword: 123456789012 }),
        'application/json',
        {
          'X-Requested-With': 'XMLHttpRequest',
        },
      ),
    );
    await add(
      'json objects',
      post(
        JSON.stringify({
          currentPassword: { a: 1 },
          newPassword: [NEW_PASSWORD],
          repeatPassword: [NEW_PASSWORD],
        }),
        'application/json',
      ),
    );
    await add(
      'control characters',
      post(
        q(
          form({
            currentPassword: 'not\u0000mine\u0007\r\n',
            newPassword: 'new\u0000pass\u0007word\r\n',
            repeatPassword: 'new\u0000pass\u0007word\r\n',
          }),
        ),
        urlencoded,
      ),
    );
    await add(
      'not UTF-8',
      post(`currentPassword=%FF%FE&newPassword=${'%C3'.repeat(20)}&repeatPassword=x`, urlencoded),
    );
    await add(
      'too long',
      post(q(form({ newPassword: 'x'.repeat(5000), repeatPassword: 'x'.repeat(5000) })), urlencoded),
    );
    await add('over the body limit', post(q(form({ newPassword: 'y'.repeat(3_000_000) })), urlencoded));
    const statuses = Object.fromEntries(cases.map(([label, response]) => [label, response.status]));
    for (const [label, response] of cases) {
      expect(response.status, `${label}: ${JSON.stringify(statuses)}`).toBeGreaterThanOrEqual(400);
      expect(response.status, `${label}: ${JSON.stringify(statuses)}`).toBeLessThan(500);
      const text = await response.text();
      expect(text, label).not.toContain(NEW_PASSWORD);
      expect(text, label).not.toContain(TEST_PASSWORD);
    }
    console.log(`${backend} malformed statuses`, statuses);
    expect(await changes(user.id)).toBe(0);
    expect(await checkPassword(app.db.pool, user.id, TEST_PASSWORD)).toBe(true);

    // Not malformed: a JSON request with the right fields is a change like the form.
    const json = await post(
      JSON.stringify(form({ newPassword: THIRD_PASSWORD, repeatPassword: THIRD_PASSWORD })),
      'application/json',
      {
        'X-Requested-With': 'XMLHttpRequest',
      },
    );
    expect(json.status).toBe(302);
    expect(json.headers.get('location')).toBe('/account');
    expect(await changes(user.id)).toBe(1);
    expect(await checkPassword(app.db.pool, user.id, THIRD_PASSWORD)).toBe(true);
  });

  it('/account shows every role its own name, escaped', async () => {
    for (const role of ['viewer', 'editor', 'admin'] as const) {
      const email = `xss-${role}-${Math.random().toString(36).slice(2, 8)}@rivals.test`;
      const name = `<img src=x onerror=alert(1)> "${role}" & </dd><script>alert(2)</script>`;
      const { userId, outcome } = await createAccount(
        app.db.pool,
        (command) => app.runtime.route(envelope(command)),
        { email, displayName: name, role, password: TEST_PASSWORD },
      );
      expect(outcome?.status).toBe('accepted');
      await app.runtime.store.notifyAppended();
      await waitFor(async () => {
        const { rows } = await app.db.pool.query('SELECT 1 FROM user_list WHERE id = $1', [userId]);
        return rows.length > 0;
      }, 'the user in the list');
      const client = new TestClient(app.url);
      await client.signIn(email, TEST_PASSWORD);
      const page = await client.get('/account');
      expect(page.status, role).toBe(200);
      const html = await page.text();
      expect(html).not.toContain('<img src=x');
      expect(html).not.toContain('<script>alert(2)');
      expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    }
  });
});
