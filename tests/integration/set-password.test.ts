import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Command } from '#events/command.ts';
import { checkPassword, setPassword, type Dispatch } from '#services/user/accounts.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { startTestApp, TEST_PASSWORD, type TestApp } from '#tests/support/test-app.ts';
import { TestClient } from '#tests/support/test-client.ts';
import { until } from '#tests/support/until.ts';
import { endSessionsSignedInBefore } from '#web/auth/sessions.server.ts';

/**
 * `users:set-password`, the operator's way back into an account (the first admin's password is printed
 * once): what the command does, through the same functions, against the real app. The old password stops
 * working, the new one signs in, whoever was signed in with the old one is signed out, and the audit says
 * who did it; a user that does not exist changes nothing.
 */
describe.each(databaseBackends)('setting a password on %s', (backend) => {
  let app: TestApp;
  const operator = { id: 'operator:test', name: 'Operator test' };
  let dispatch: Dispatch;

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: false });
    dispatch = (command: Command) =>
      app.runtime.route({
        commandId: randomUUID(),
        correlationId: 'cli',
        actor: operator,
        at: new Date().toISOString(),
        command,
      });
  });
  afterAll(async () => {
    await app.close();
  });

  const signIn = async (email: string, password: string) => {
    const client = new TestClient(app.url);
    await client.get('/login');
    const response = await client.postForm('/login', { email, password });
    return { client, signedIn: response.status === 302 };
  };
  const emailOf = async (userId: string) =>
    (await app.db.pool.query<{ email: string }>('SELECT email FROM user_list WHERE id = $1', [userId]))
      .rows[0]?.email ?? '';

  it('the new password signs in, the old one no longer does, its sessions are signed out, and the audit names the operator', async () => {
    const userId = app.userIds.editor;
    const email = await emailOf(userId);
    const old = await app.client('editor');
    expect((await old.get('/competitors')).status).toBe(200);

    const outcome = await setPassword(app.db.pool, dispatch, { userId, password: 'a-new-password-12' });
    expect(outcome?.status).toBe('accepted');
    if (outcome?.status !== 'accepted') return;
    const ended = await endSessionsSignedInBefore(app.db.pool, userId, Math.max(...outcome.positions));
    expect(ended).toBeGreaterThanOrEqual(1);

    // Signed out: the next page is the sign-in page.
    const page = await old.get('/competitors');
    expect(page.status).toBe(302);
    expect(page.headers.get('location')).toMatch(/^\/login/);
    expect(await checkPassword(app.db.pool, userId, 'a-new-password-12')).toBe(true);
    const after = await signIn(email, 'a-new-password-12');
    expect(after.signedIn).toBe(true);
    // A session signed in after the reset is not ended by it.
    expect((await after.client.get('/competitors')).status).toBe(200);
    expect((await signIn(email, TEST_PASSWORD)).signedIn).toBe(false);

    const { rows } = await app.db.pool.query<{ actor: { id: string } }>(
      `SELECT metadata->'actor' AS actor FROM events WHERE type = 'UserPasswordReset' AND data->>'userId' = $1`,
      [userId],
    );
    expect(rows.map((r) => r.actor.id)).toEqual([operator.id]);
    const admin = await app.client('admin');
    await until(
      async () => (await (await admin.get('/audit')).text()).includes('Set a new password for Test editor'),
      'the reset in the audit log',
    );
  });

  it('a user that does not exist is refused, and nothing is recorded or stored', async () => {
    const userId = randomUUID();
    const outcome = await setPassword(app.db.pool, dispatch, { userId, password: 'a-new-password-12' });
    expect(outcome).toMatchObject({ status: 'rejected', code: 'not_found' });
    const { rows } = await app.db.pool.query(
      `SELECT 1 FROM user_credentials WHERE user_id = $1
       UNION ALL SELECT 1 FROM events WHERE type = 'UserPasswordReset' AND data->>'userId' = $1::text`,
      [userId],
    );
    expect(rows).toEqual([]);
  });
});
