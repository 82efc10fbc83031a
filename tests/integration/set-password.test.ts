import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Command } from '#events/command.ts';
import { checkPassword, setPassword, type Dispatch } from '#services/user/accounts.ts';
import { freshUser, waitFor } from '#tests/security/support/helpers.ts';
import {
  disconnection,
  handshakeResult,
  securityBackends,
  startSecurityApp,
  type SecurityApp,
} from '#tests/security/support/security-app.ts';
import { TEST_PASSWORD } from '#tests/support/test-app.ts';
import { TestClient } from '#tests/support/test-client.ts';
import { endSessionsSignedInBefore } from '#web/auth/sessions.server.ts';

/**
 * `users:set-password`, the operator's way back into an account (the first admin's password is printed
 * once): what the command does, through the same functions, against the real app. The old password stops
 * working, the new one signs in, whoever was signed in with the old one is signed out (pages and live
 * sockets), and the audit says who did it; a user that does not exist changes nothing.
 */
describe.each(securityBackends)('setting a password on %s', (backend) => {
  let app: SecurityApp;
  const operator = { id: 'operator:test', name: 'Operator test' };
  let dispatch: Dispatch;
  const NEW_PASSWORD = 'a-new-password-12';

  beforeAll(async () => {
    app = await startSecurityApp(backend);
    dispatch = (command: Command) =>
      app.runtime.route({
        commandId: randomUUID(),
        correlationId: 'cli',
        actor: operator,
        at: new Date().toISOString(),
        command,
      });
  });
  afterAll(() => app.close());

  const signIn = async (email: string, password: string) => {
    const client = new TestClient(app.url);
    await client.get('/login');
    const response = await client.postForm('/login', { email, password });
    return { client, signedIn: response.status === 302 };
  };

  it('the new password signs in, the old one no longer does, its page and socket are signed out, and the audit names the operator', async () => {
    const user = await freshUser(app, 'editor', 'reset');
    const socket = app.socket({ cookie: user.client.cookieHeader() });
    expect((await handshakeResult(socket)).connected).toBe(true);
    const closed = disconnection(socket);

    const outcome = await setPassword(app.db.pool, dispatch, { userId: user.id, password: NEW_PASSWORD });
    expect(outcome?.status).toBe('accepted');
    if (outcome?.status !== 'accepted') return;
    const ended = await endSessionsSignedInBefore(app.db.pool, user.id, Math.max(...outcome.positions));
    expect(ended).toBe(1);
    await app.runtime.store.notifyAppended();

    // Signed out: the page goes to sign-in, the socket is closed by the user feed's signal.
    const page = await user.client.get('/competitors');
    expect(page.status).toBe(302);
    expect(page.headers.get('location')).toBe('/login?next=%2Fcompetitors');
    expect(await closed).toEqual(expect.objectContaining({ reason: 'io server disconnect', told: true }));
    expect(await checkPassword(app.db.pool, user.id, NEW_PASSWORD)).toBe(true);
    expect((await signIn(user.email, TEST_PASSWORD)).signedIn).toBe(false);
    const after = await signIn(user.email, NEW_PASSWORD);
    expect(after.signedIn).toBe(true);
    expect((await after.client.get('/competitors')).status).toBe(200);

    const { rows } = await app.db.pool.query<{ actor: { id: string } }>(
      `SELECT metadata->'actor' AS actor FROM events WHERE type = 'UserPasswordReset' AND data->>'userId' = $1`,
      [user.id],
    );
    expect(rows.map((r) => r.actor.id)).toEqual([operator.id]);
    const admin = await app.client('admin');
    await waitFor(
      async () =>
        (await (await admin.get('/audit')).text()).includes('Set a new password for Throwaway reset'),
      'the reset in the audit log',
    );
  });

  it("a change whose sessions nobody deleted (the operator's command stopped, or its signal came first) still signs out the old password's page and socket, at once", async () => {
    const user = await freshUser(app, 'viewer', 'not-deleted');
    const socket = app.socket({ cookie: user.client.cookieHeader() });
    expect((await handshakeResult(socket)).connected).toBe(true);
    const closed = disconnection(socket);

    const outcome = await setPassword(app.db.pool, dispatch, { userId: user.id, password: NEW_PASSWORD });
    expect(outcome?.status).toBe('accepted');
    await app.runtime.store.notifyAppended();
    // Closed on the user feed's signal (or its follow-up), not by the periodic re-check a minute later.
    const late = new Promise<'not closed'>((resolve) => setTimeout(() => resolve('not closed'), 15_000));
    expect(await Promise.race([closed, late])).toEqual(
      expect.objectContaining({ reason: 'io server disconnect', told: true }),
    );
    const page = await user.client.get('/competitors');
    expect(page.status).toBe(302);
    expect(page.headers.get('location')).toBe('/login?next=%2Fcompetitors');
    const { rows: left } = await app.db.pool.query('SELECT 1 FROM sessions WHERE user_id = $1', [user.id]);
    expect(left).toEqual([]);
    // A sign-in after the change is not one of them.
    const after = await signIn(user.email, NEW_PASSWORD);
    expect(after.signedIn).toBe(true);
    expect((await after.client.get('/competitors')).status).toBe(200);
  });

  it('a user that does not exist is refused, and nothing is recorded or stored', async () => {
    const userId = randomUUID();
    const outcome = await setPassword(app.db.pool, dispatch, { userId, password: NEW_PASSWORD });
    expect(outcome).toMatchObject({ status: 'rejected', code: 'not_found' });
    const { rows } = await app.db.pool.query(
      `SELECT 1 FROM user_credentials WHERE user_id = $1
       UNION ALL SELECT 1 FROM events WHERE type = 'UserPasswordReset' AND data->>'userId' = $1::text`,
      [userId],
    );
    expect(rows).toEqual([]);
  });

  it('two changes of one password at once: the one the log records last is the password, whichever hash is stored last; the other is told it was not stored', async () => {
    const user = await freshUser(app, 'editor', 'two-at-once');
    const FIRST = 'the-first-change-12';
    const SECOND = 'the-second-change-12';
    // The first change is recorded, then held before its hash is stored while the second is recorded and
    // stored: the order two requests can take (an admin's reset while the user changes it, two tabs).
    let recorded!: () => void;
    const firstRecorded = new Promise<void>((resolve) => (recorded = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const held: Dispatch = async (command) => {
      const outcome = await dispatch(command);
      recorded();
      await released;
      return outcome;
    };
    const first = setPassword(app.db.pool, held, { userId: user.id, password: FIRST });
    await firstRecorded;
    const second = await setPassword(app.db.pool, dispatch, { userId: user.id, password: SECOND });
    release();
    expect(second?.status).toBe('accepted');
    expect(await first).toMatchObject({
      status: 'rejected',
      code: 'conflict',
      message: expect.stringContaining('this one was not stored'),
    });
    expect(await checkPassword(app.db.pool, user.id, SECOND)).toBe(true);
    expect(await checkPassword(app.db.pool, user.id, FIRST)).toBe(false);
    expect((await signIn(user.email, SECOND)).signedIn).toBe(true);
  });

  it('the same change storing its hash twice (a resend finishing it) stores it both times', async () => {
    const user = await freshUser(app, 'viewer', 'same-change');
    const command = randomUUID();
    // One command id: the second sending is answered with the first's outcome, as a page's resend is.
    const once: Dispatch = (payload) =>
      app.runtime.route({
        commandId: command,
        correlationId: 'cli',
        actor: operator,
        at: new Date().toISOString(),
        command: payload,
      });
    const first = await setPassword(app.db.pool, once, { userId: user.id, password: NEW_PASSWORD });
    const again = await setPassword(app.db.pool, once, { userId: user.id, password: NEW_PASSWORD });
    expect([first?.status, again?.status]).toEqual(['accepted', 'accepted']);
    expect(again).toEqual(first);
    expect(await checkPassword(app.db.pool, user.id, NEW_PASSWORD)).toBe(true);
  });
});
