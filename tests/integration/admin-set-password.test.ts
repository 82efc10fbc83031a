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
import { type TestClient } from '#tests/support/test-client.ts';

/**
 * /users/:id/password: an admin sets another user's password (one who forgot theirs). Against the real
 * app on both backends: refusals say which field and why and change nothing; a set password is the only
 * one that signs in, every browser signed in as that user is signed out (page and live socket), and the
 * audit says which admin did it; the same form sent again is one change; your own password is not set here.
 */
describe.each(securityBackends)("an admin sets a user's password on %s", (backend) => {
  let app: SecurityApp;
  let admin: TestClient;
  const SET_PASSWORD = 'set-by-an-admin-1';

  beforeAll(async () => {
    app = await startSecurityApp(backend);
    admin = await app.client('admin');
  });
  afterAll(() => app.close());

  const signsIn = (email: string, password: string) => signsInAs(app, email, password);
  const resets = (userId: string) => passwordChanges(app, userId, 'UserPasswordReset');
  const form = (fields: Partial<Record<'newPassword' | 'repeatPassword', string>> = {}) => ({
    newPassword: SET_PASSWORD,
    repeatPassword: SET_PASSWORD,
    _idempotency_key: randomUUID(),
    ...fields,
  });
  const setPassword = async (userId: string, fields: Record<string, string>) => {
    await admin.get(`/users/${userId}/password`);
    return admin.postForm(`/users/${userId}/password`, fields);
  };

  it('the users list links to the form; short passwords and two that differ are refused, saying why, and change nothing', async () => {
    const user = await freshUser(app, 'viewer', 'refused');
    const list = await (await admin.get(`/users?search=${encodeURIComponent(user.email)}`)).text();
    expect(list).toContain(`href="/users/${user.id}/password"`);
    const page = await admin.get(`/users/${user.id}/password`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Set a password for Throwaway refused');
    const cases: [Parameters<typeof form>[0], string, string][] = [
      [{ repeatPassword: `${SET_PASSWORD}x` }, 'The two new passwords differ', 'field-repeatPassword-error'],
      [
        { newPassword: 'short', repeatPassword: 'short' },
        'at least 12 characters',
        'field-newPassword-error',
      ],
      [{ newPassword: '', repeatPassword: '' }, 'at least 12 characters', 'field-newPassword-error'],
    ];
    for (const [fields, message, errorId] of cases) {
      const response = await setPassword(user.id, form(fields));
      expect(response.status, message).toBe(400);
      const body = await response.text();
      expect(body).toContain(message);
      expect(body).toContain(errorId);
      // A refused form never sends a password back.
      expect(body).not.toContain(SET_PASSWORD);
    }
    expect(await resets(user.id)).toBe(0);
    expect(await signsIn(user.email, TEST_PASSWORD)).toBe(true);
  });

  it('a password sent twice is refused by name, not read as empty; nothing changed or sent back', async () => {
    const user = await freshUser(app, 'viewer', 'twice');
    const message =
      'This field came more than once (or not as text), so the password was not set. Reload the page and make your change again.';
    for (const twice of ['newPassword', 'repeatPassword'] as const) {
      await admin.get(`/users/${user.id}/password`);
      const sent = await admin.postForm(`/users/${user.id}/password`, [
        ...Object.entries(form()),
        [twice, SET_PASSWORD],
      ]);
      expect(sent.status, twice).toBe(400);
      const html = await sent.text();
      expect(new RegExp(`id="field-${twice}-error">([^<]*)<`).exec(html)?.[1], twice).toBe(message);
      expect(html).not.toContain(SET_PASSWORD);
    }
    expect(await resets(user.id)).toBe(0);
    expect(await signsIn(user.email, TEST_PASSWORD)).toBe(true);
  });

  it('a set password is the only one that signs in, the user is signed out everywhere (page and socket), and the audit names the admin', async () => {
    const user = await freshUser(app, 'editor', 'forgot');
    const socket = app.socket({ cookie: user.client.cookieHeader() });
    expect((await handshakeResult(socket)).connected).toBe(true);
    const closed = disconnection(socket);

    const response = await setPassword(user.id, form());
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/users');
    const list = await (await admin.get('/users')).text();
    expect(list).toContain('Throwaway forgot&#x27;s password is set: share it with them securely.');
    expect(list).not.toContain('cannot sign in until');

    expect((await user.client.get('/competitors')).status).toBe(302);
    expect(await closed).toEqual(expect.objectContaining({ reason: 'io server disconnect', told: true }));
    expect(await signsIn(user.email, TEST_PASSWORD)).toBe(false);
    expect(await signsIn(user.email, SET_PASSWORD)).toBe(true);
    expect(await resets(user.id)).toBe(1);

    expect(await passwordChangedBy(app, user.id, 'UserPasswordReset')).toEqual([app.userIds.admin]);
    await untilAudited(admin, 'Set a new password for Throwaway forgot');
  });

  it('the same form sent again is answered as the first and makes one change; the same key with another password changes nothing', async () => {
    const user = await freshUser(app, 'viewer', 'double');
    const sent = form();
    expect((await setPassword(user.id, sent)).status).toBe(302);
    const again = await admin.postForm(`/users/${user.id}/password`, sent);
    expect(again.status).toBe(302);
    expect(again.headers.get('location')).toBe('/users');
    expect(await resets(user.id)).toBe(1);

    const other = await admin.postForm(`/users/${user.id}/password`, {
      ...sent,
      newPassword: 'another-password-22',
      repeatPassword: 'another-password-22',
    });
    expect(other.status).toBe(400);
    expect(await other.text()).toContain('This form already set Throwaway double&#x27;s password');
    expect(await resets(user.id)).toBe(1);
    expect(await checkPassword(app.db.pool, user.id, SET_PASSWORD)).toBe(true);
  });

  it('a disabled user is told about when set; your own password is not set here; an unknown user is not found; an editor may not', async () => {
    const user = await freshUser(app, 'viewer', 'disabled');
    await admin.get('/users');
    expect((await admin.postForm(`/users/${user.id}/disable`, {})).status).toBe(302);
    expect((await setPassword(user.id, form())).status).toBe(302);
    expect(await (await admin.get('/users')).text()).toContain(
      'They cannot sign in until their account is enabled.',
    );

    const self = app.userIds.admin;
    const own = await admin.get(`/users/${self}/password`);
    expect(own.status).toBe(302);
    expect(own.headers.get('location')).toBe('/account');
    await admin.get('/users');
    const ownPost = await admin.postForm(`/users/${self}/password`, form());
    expect(ownPost.status).toBe(400);
    expect(await ownPost.text()).toContain('To change your own password, use Your account');
    expect(await resets(self)).toBe(0);

    expect((await admin.get(`/users/${randomUUID()}/password`)).status).toBe(404);

    const editor = await app.client('editor');
    await editor.get('/competitors');
    const refused = await editor.postForm(
      `/users/${user.id}/password`,
      form({ newPassword: 'by-an-editor-12' }),
    );
    expect(refused.status).toBe(403);
    expect(await resets(user.id)).toBe(1);
  });
});
