import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPassword } from '#services/user/accounts.ts';
import {
  freshUser,
  passwordChangedBy,
  passwordChanges,
  signsIn as signsInAs,
  untilAudited,
} from '#tests/security/support/helpers.ts';
import {
  disconnection,
  handshakeResult,
  securityBackends,
  startSecurityApp,
  type SecurityApp,
} from '#tests/security/support/security-app.ts';
import { TEST_PASSWORD } from '#tests/support/test-app.ts';
import { TestClient } from '#tests/support/test-client.ts';

/**
 * /account: a signed-in user sets their own password, giving the current one. Against the real app on
 * both backends: every refusal says which field and why and changes nothing; a change signs in with the
 * new password only, keeps this browser signed in and signs the others out (page and live socket), and
 * the audit says who did it; the same form sent again is one change; guesses of the current password
 * are limited like sign-ins.
 */
describe.each(securityBackends)('changing your own password on %s', (backend) => {
  let app: SecurityApp;
  const NEW_PASSWORD = 'my-own-new-password-1';

  beforeAll(async () => {
    app = await startSecurityApp(backend);
  });
  afterAll(() => app.close());

  const signsIn = (email: string, password: string) => signsInAs(app, email, password);

  const changes = (userId: string) => passwordChanges(app, userId);

  const form = (fields: Partial<Record<'currentPassword' | 'newPassword' | 'repeatPassword', string>>) => ({
    currentPassword: TEST_PASSWORD,
    newPassword: NEW_PASSWORD,
    repeatPassword: NEW_PASSWORD,
    _idempotency_key: randomUUID(),
    ...fields,
  });

  it('refuses a wrong current password, new passwords that differ, a short one and the current one again, saying why, and changes nothing', async () => {
    const user = await freshUser(app, 'viewer', 'refused');
    const page = await user.client.get('/account');
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Change your password');
    const cases: [Parameters<typeof form>[0], string][] = [
      [{ currentPassword: 'not-my-password-1' }, 'That is not your current password.'],
      [{ currentPassword: '' }, 'Enter your current password.'],
      [{ repeatPassword: `${NEW_PASSWORD}x` }, 'The two new passwords differ'],
      [{ newPassword: 'short', repeatPassword: 'short' }, 'at least 12 characters'],
      [{ newPassword: TEST_PASSWORD, repeatPassword: TEST_PASSWORD }, 'the one you have now'],
    ];
    for (const [fields, message] of cases) {
      const response = await user.client.postForm('/account/password', form(fields));
      expect(response.status, message).toBe(400);
      expect(await response.text()).toContain(message);
    }
    expect(await changes(user.id)).toBe(0);
    expect(await signsIn(user.email, TEST_PASSWORD)).toBe(true);
    expect(await checkPassword(app.db.pool, user.id, NEW_PASSWORD)).toBe(false);
  });

  it('a password sent twice is refused by name, not read as empty, before anything is checked; nothing changed or sent back', async () => {
    const user = await freshUser(app, 'viewer', 'twice');
    await user.client.get('/account');
    const message =
      'This field came more than once (or not as text), so your password was not changed. Reload the page and make your change again.';
    for (const twice of ['currentPassword', 'newPassword', 'repeatPassword'] as const) {
      const fields = form({}) as Record<string, string>;
      const sent = await user.client.postForm('/account/password', [
        ...Object.entries(fields),
        [twice, fields[twice] ?? ''],
      ]);
      expect(sent.status, twice).toBe(400);
      const html = await sent.text();
      // Read as empty, the current password twice (the right one) said "Enter your current password.".
      expect(new RegExp(`id="field-${twice}-error">([^<]*)<`).exec(html)?.[1], twice).toBe(message);
      expect(html).not.toContain(TEST_PASSWORD);
      expect(html).not.toContain(NEW_PASSWORD);
    }
    expect(await changes(user.id)).toBe(0);
    expect(await signsIn(user.email, TEST_PASSWORD)).toBe(true);
  });

  it('a change: only the new password signs in, this browser stays signed in, another is signed out (page and socket), and the audit names the user', async () => {
    const user = await freshUser(app, 'editor', 'changes');
    const elsewhere = new TestClient(app.url);
    await elsewhere.signIn(user.email, TEST_PASSWORD);
    const socket = app.socket({ cookie: elsewhere.cookieHeader() });
    expect((await handshakeResult(socket)).connected).toBe(true);
    const closed = disconnection(socket);

    await user.client.get('/account');
    const response = await user.client.postForm('/account/password', form({}));
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/account');
    const after = await user.client.get('/account');
    expect(after.status).toBe(200);
    expect(await after.text()).toContain('Your password is changed.');

    expect((await elsewhere.get('/competitors')).status).toBe(302);
    await app.runtime.store.notifyAppended();
    expect(await closed).toEqual(expect.objectContaining({ reason: 'io server disconnect', told: true }));
    expect(await signsIn(user.email, TEST_PASSWORD)).toBe(false);
    expect(await signsIn(user.email, NEW_PASSWORD)).toBe(true);
    expect(await changes(user.id)).toBe(1);

    expect(await passwordChangedBy(app, user.id, 'UserPasswordChanged')).toEqual([user.id]);
    await untilAudited(await app.client('admin'), 'Changed their own', 'Throwaway changes');
  });

  it('the same form sent again after it went through is answered as the first and makes one change; the same key with another new password is not', async () => {
    const user = await freshUser(app, 'viewer', 'resent');
    await user.client.get('/account');
    const sent = form({});
    expect((await user.client.postForm('/account/password', sent)).status).toBe(302);
    await user.client.get('/account');
    // The current password in the form is the old one now: the first sending changed it.
    const again = await user.client.postForm('/account/password', sent);
    expect(again.status).toBe(302);
    expect(await (await user.client.get('/account')).text()).toContain('Your password is changed.');
    expect(await changes(user.id)).toBe(1);
    expect(await checkPassword(app.db.pool, user.id, NEW_PASSWORD)).toBe(true);

    const other = await user.client.postForm('/account/password', {
      ...sent,
      newPassword: 'yet-another-password-2',
      repeatPassword: 'yet-another-password-2',
    });
    expect(other.status).toBe(400);
    expect(await other.text()).toContain('That is not your current password.');
    expect(await changes(user.id)).toBe(1);
  });

  it('the same form sent again from the session the change ended (its answer lost) is told the password changed, not that nothing was', async () => {
    const user = await freshUser(app, 'viewer', 'lost-answer');
    await user.client.get('/account');
    // The browser that never got the first answer still holds the old session's cookie and form token.
    const headers = {
      Cookie: user.client.cookieHeader(),
      Origin: app.url,
      'Content-Type': 'application/x-www-form-urlencoded',
    };
    const sent = { ...form({}), _csrf: user.client.csrfToken };
    const send = (fields: Record<string, string>) =>
      fetch(`${app.url}/account/password`, {
        method: 'POST',
        headers,
        body: new URLSearchParams(fields),
        redirect: 'manual',
      });
    expect((await send(sent)).status).toBe(302);

    const again = await send(sent);
    expect(again.status).toBe(302);
    expect(again.headers.get('location')).toBe('/login?next=%2Faccount');
    // This browser's cookies after that answer (the flash it set; its dead session cookie cleared).
    const jar = new Map(headers.Cookie.split('; ').map((pair) => pair.split(/=(.*)/s) as [string, string]));
    for (const line of again.headers.getSetCookie()) {
      const [name = '', value = ''] = (line.split(';')[0] ?? '').split(/=(.*)/s);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const told = await fetch(`${app.url}/login?next=%2Faccount`, { headers: { Cookie: cookie } });
    expect(await told.text()).toContain('Your password was changed: this same form was sent before');
    expect(await changes(user.id)).toBe(1);

    // Only that form, with the password it set: another new password on the same key is the usual refusal.
    const other = await send({
      ...sent,
      newPassword: 'a-guessed-password-3',
      repeatPassword: 'a-guessed-password-3',
    });
    expect(other.status).toBe(401);
    expect(await other.text()).toContain('Your session has ended');
    expect(await signsIn(user.email, NEW_PASSWORD)).toBe(true);
  });

  it('guesses of the current password count with the sign-ins: the sixth wrong one in a minute waits', async () => {
    const user = await freshUser(app, 'viewer', 'guesses');
    await user.client.get('/account');
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const response = await user.client.postForm(
        '/account/password',
        form({ currentPassword: `guess-number-${i}-x` }),
      );
      statuses.push(response.status);
      if (response.status === 429) expect(await response.text()).toContain('Too many wrong passwords.');
    }
    expect(statuses).toEqual([400, 400, 400, 400, 400, 429]);
    expect(await changes(user.id)).toBe(0);
  });

  it('signed out, the page asks to sign in, and a change without the form token is refused', async () => {
    const anonymous = new TestClient(app.url);
    const page = await anonymous.get('/account');
    expect(page.status).toBe(302);
    expect(page.headers.get('location')).toBe('/login?next=%2Faccount');
    const user = await freshUser(app, 'viewer', 'tokenless');
    const response = await user.client.postForm('/account/password', form({}), { csrf: false });
    expect(response.status).toBe(403);
    expect(await changes(user.id)).toBe(0);
  });
});
