import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ServiceUnavailableError } from '#infra/errors.ts';
import { hashPassword } from '#infra/passwords.ts';
import { stableUuid } from '#services/bootstrap/bootstrap.ts';
import { checkPassword } from '#services/user/accounts.ts';
import { bootstrapAdmin } from '#services/user/bootstrap-admin.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { writeSide } from '#tests/support/runtime-pieces.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';
import { TestClient } from '#tests/support/test-client.ts';
import { createTestDatabase } from '#tests/support/test-database.ts';

/**
 * Adding a user from the users screen: the password hash is stored first (user_credentials, keyed by the
 * user id, which is the form's idempotency key), then AddUser records the user. A creation that stops
 * between the two, a resend with another password, two admins adding the same email: the admin is told
 * the truth, and the user signs in with the password they were told about.
 */
describe.each(databaseBackends)('creating a user on %s', (backend) => {
  let app: TestApp;
  let admin: TestClient;

  const passwordA = 'first-password-given';
  const passwordB = 'corrected-password-given';

  const form = (email: string, password: string, key: string) => ({
    email,
    displayName: `User ${email.split('@')[0]}`,
    role: 'viewer',
    password,
    _idempotency_key: key,
  });

  async function addUser(client: TestClient, fields: Record<string, string>) {
    await client.get('/users/new');
    const response = await client.postForm('/users', fields);
    const page =
      response.status === 302
        ? await (await client.get(response.headers.get('location') ?? '/')).text()
        : await response.text();
    return { status: response.status, page };
  }

  /** Whether the password signs in at the door (the login form), as the new user would try it. */
  async function signsIn(email: string, password: string): Promise<boolean> {
    const client = new TestClient(app.url);
    await client.get('/login');
    return (await client.postForm('/login', { email, password })).status === 302;
  }

  const usersWithEmail = async (email: string) =>
    (await app.db.pool.query<{ id: string }>('SELECT id FROM user_list WHERE email = $1', [email])).rows;
  const credentialRows = async (ids: string[]) =>
    (
      await app.db.pool.query<{ user_id: string }>(
        'SELECT user_id FROM user_credentials WHERE user_id = ANY($1::uuid[])',
        [ids],
      )
    ).rows.map((row) => row.user_id);

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: false });
    admin = await app.client('admin');
  });

  afterAll(async () => {
    await app.close();
  });

  it('a field sent twice is refused by name, not read as empty; nobody added, the password never sent back', async () => {
    const email = 'sent-twice@rivals.test';
    const message =
      'This field came more than once (or not as text), so nobody was added. Reload the page and make your change again.';
    const seconds = { displayName: 'Another Name', password: passwordB, role: 'admin' } as const;
    for (const [twice, second] of Object.entries(seconds)) {
      await admin.get('/users/new');
      const sent = await admin.postForm('/users', [
        ...Object.entries(form(email, passwordA, randomUUID())),
        [twice, second],
      ]);
      expect(sent.status, twice).toBe(400);
      const html = await sent.text();
      // Read as empty, a name twice said "Name is required.", a password twice "at least 12 characters".
      expect(new RegExp(`id="field-${twice}-error">([^<]*)<`).exec(html)?.[1], twice).toBe(message);
      expect(html).toContain(`value="User sent-twice"`);
      expect(html).not.toContain(passwordA);
      expect(html).not.toContain(passwordB);
    }
    await admin.get('/users/new');
    const json = await admin.postJson(
      '/users',
      { ...form(email, passwordA, randomUUID()), role: ['viewer'] },
      { xhr: false },
    );
    expect(json.status).toBe(400);
    expect(/id="field-role-error">([^<]*)</.exec(await json.text())?.[1]).toBe(message);
    expect(await usersWithEmail(email)).toEqual([]);
  });

  it('refuses text-direction controls in a name, saying why; right-to-left letters and marks are accepted', async () => {
    const message =
      'Name cannot contain text-direction controls (such as U+202E, right-to-left override): they make the text around it read differently from what it is.';
    for (const [i, name] of ['Evil\u202eCorp', 'Isolated \u2066x\u2069', 'Embed\u202aded'].entries()) {
      const email = `direction-${i}@rivals.test`;
      const refused = await addUser(admin, { ...form(email, passwordA, randomUUID()), displayName: name });
      expect(refused.status, name).toBe(400);
      expect(/id="field-displayName-error">([^<]*)</.exec(refused.page)?.[1], name).toBe(message);
      expect(await usersWithEmail(email)).toEqual([]);
    }
    const email = 'right-to-left@rivals.test';
    const added = await addUser(admin, {
      ...form(email, passwordA, randomUUID()),
      displayName: 'سارة\u200f Haddad',
    });
    expect(added.status).toBe(302);
    expect(await usersWithEmail(email)).toHaveLength(1);
  });

  it('a creation stopped after storing the password is completed by the retry, with the password it gives', async () => {
    // What a process killed between the INSERT and the command leaves: a hash, no user, no command.
    const key = randomUUID();
    const email = 'half-way@rivals.test';
    await app.db.pool.query('INSERT INTO user_credentials (user_id, password_hash) VALUES ($1, $2)', [
      key,
      await hashPassword(passwordA),
    ]);
    // The pending hash signs no one in and shows nowhere.
    expect(await signsIn(email, passwordA)).toBe(false);
    expect(await usersWithEmail(email)).toEqual([]);

    // The admin corrected the password field and sent the form again (the same key).
    const retry = await addUser(admin, form(email, passwordB, key));
    expect(retry.status).toBe(302);
    expect(retry.page).toContain('can now sign in as viewer');
    expect(await usersWithEmail(email)).toEqual([{ id: key }]);
    expect(await signsIn(email, passwordB)).toBe(true);
    expect(await checkPassword(app.db.pool, key, passwordA)).toBe(false);
  });

  it('a dispatch that fails answers 503, and the retry with another password creates the user with it', async () => {
    const key = randomUUID();
    const email = 'unavailable@rivals.test';
    const { gateway } = app.runtime;
    const down = vi
      .spyOn(gateway, 'dispatch')
      .mockRejectedValue(
        new ServiceUnavailableError(
          'Your change could not be accepted because the database is unavailable. Nothing was saved; please try again in a moment.',
        ),
      );
    try {
      const first = await addUser(admin, form(email, passwordA, key));
      expect(first.status).toBe(503);
    } finally {
      down.mockRestore();
    }
    expect(await usersWithEmail(email)).toEqual([]);
    expect(await signsIn(email, passwordA)).toBe(false);

    const retry = await addUser(admin, form(email, passwordB, key));
    expect(retry.status).toBe(302);
    expect(retry.page).toContain('can now sign in as viewer');
    expect(await signsIn(email, passwordB)).toBe(true);
    expect(await checkPassword(app.db.pool, key, passwordA)).toBe(false);
  });

  it('a fresh attempt after a stopped one makes one user; the stopped one’s hash signs no one in', async () => {
    const stopped = randomUUID();
    const email = 'fresh-attempt@rivals.test';
    await app.db.pool.query('INSERT INTO user_credentials (user_id, password_hash) VALUES ($1, $2)', [
      stopped,
      await hashPassword(passwordA),
    ]);
    const fresh = randomUUID();
    const added = await addUser(admin, form(email, passwordB, fresh));
    expect(added.status).toBe(302);
    expect(await usersWithEmail(email)).toEqual([{ id: fresh }]);
    expect(await signsIn(email, passwordB)).toBe(true);
    expect(await signsIn(email, passwordA)).toBe(false);
    // The old form sent again, once the email is taken: refused, and its pending hash is removed.
    const late = await addUser(admin, form(email, passwordA, stopped));
    expect(late.status).toBe(400);
    expect(late.page).toContain('A user with this email already exists.');
    expect(await credentialRows([stopped, fresh])).toEqual([fresh]);
  });

  it('a resend with another password after the user was added is refused, and says which password works', async () => {
    const key = randomUUID();
    const email = 'resent@rivals.test';
    const first = await addUser(admin, form(email, passwordA, key));
    expect(first.status).toBe(302);
    expect(first.page).toContain('can now sign in as viewer');

    const resent = await addUser(admin, form(email, passwordB, key));
    expect(resent.status).toBe(400);
    expect(resent.page).toContain('This user was already added by another sending of this same form');
    expect(resent.page).toContain('the password you gave now was not saved');
    expect(await signsIn(email, passwordA)).toBe(true);
    expect(await checkPassword(app.db.pool, key, passwordB)).toBe(false);

    // The same form sent again as it was: the first answer, nothing changed.
    const again = await addUser(admin, form(email, passwordA, key));
    expect(again.status).toBe(302);
    expect(again.page).toContain('can now sign in as viewer');
    expect(await usersWithEmail(email)).toEqual([{ id: key }]);
  });

  it('two admins adding the same email at once make one user; the other hears it exists, and leaves no hash', async () => {
    const other = await app.client('admin');
    const email = 'both-admins@rivals.test';
    const keys = [randomUUID(), randomUUID()];
    await Promise.all([admin.get('/users/new'), other.get('/users/new')]);
    const answers = await Promise.all([
      admin.postForm('/users', { ...form(email, passwordA, keys[0]!), _csrf: admin.csrfToken }),
      other.postForm('/users', { ...form(email, passwordB, keys[1]!), _csrf: other.csrfToken }),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([302, 400]);
    const refused = answers.findIndex((answer) => answer.status === 400);
    expect(await answers[refused]!.text()).toContain('A user with this email already exists.');
    const winner = keys[1 - refused]!;
    expect(await usersWithEmail(email)).toEqual([{ id: winner }]);
    expect(await credentialRows(keys)).toEqual([winner]);
    expect(await signsIn(email, refused === 0 ? passwordB : passwordA)).toBe(true);
  });
});

describe.each(databaseBackends)('the first admin after a start stopped half-way on %s', (backend) => {
  it('prints the password that signs in, not nothing', async () => {
    const db = await createTestDatabase(backend);
    try {
      const { store, route } = await writeSide(db);
      const userId = stableUuid('bootstrap:admin');
      // A first start killed after storing its (random, never printed) password, before the command.
      await db.pool.query('INSERT INTO user_credentials (user_id, password_hash) VALUES ($1, $2)', [
        userId,
        await hashPassword('never-printed-password'),
      ]);
      const printed = await bootstrapAdmin(db.pool, store, route, { email: 'admin@rivals.test' });
      expect(printed).toBeDefined();
      expect(await checkPassword(db.pool, userId, printed!.password)).toBe(true);
    } finally {
      await db.drop();
    }
  });
});
