import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { Role } from '#events/user/fields.ts';
import { createAccount } from '#services/user/accounts.ts';
import { envelope } from '#tests/support/runtime-pieces.ts';
import { TEST_PASSWORD } from '#tests/support/test-app.ts';
import { TestClient } from '#tests/support/test-client.ts';
import type { SecurityApp } from './security-app.ts';

/** Polls until `check` holds; fails with `what` after `ms` (a bound on waiting, not an assertion on time). */
export async function waitFor(check: () => Promise<boolean> | boolean, what: string, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A fresh user (visible to sign-in) and a client signed in as them. */
export async function freshUser(app: SecurityApp, role: Role, label: string) {
  const email = `${label}-${Math.random().toString(36).slice(2, 8)}@rivals.test`;
  const { userId, outcome } = await createAccount(
    app.db.pool,
    (command) => app.runtime.route(envelope(command)),
    { email, displayName: `Throwaway ${label}`, role, password: TEST_PASSWORD },
  );
  if (outcome?.status !== 'accepted') throw new Error(`could not create ${email}`);
  await app.runtime.store.notifyAppended();
  await waitFor(async () => {
    const { rows } = await app.db.pool.query('SELECT 1 FROM user_list WHERE id = $1', [userId]);
    return rows.length > 0;
  }, `user ${email} in the user list`);
  const client = new TestClient(app.url);
  await client.signIn(email, TEST_PASSWORD);
  return { id: userId, email, client };
}

/** Events of a type in the log. */
export async function eventCount(app: SecurityApp, type: string): Promise<number> {
  const { rows } = await app.db.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM events WHERE type = $1',
    [type],
  );
  return rows[0]?.n ?? -1;
}

/**
 * Password changes recorded for one user: their own (`UserPasswordChanged`, the default) or an admin's
 * (`UserPasswordReset`).
 */
export async function passwordChanges(
  app: SecurityApp,
  userId: string,
  type: 'UserPasswordChanged' | 'UserPasswordReset' = 'UserPasswordChanged',
): Promise<number> {
  const { rows } = await app.db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM events WHERE type = $2 AND data->>'userId' = $1`,
    [userId, type],
  );
  return rows[0]?.n ?? -1;
}

/** Who recorded each password change of this type for one user (the events' actors, oldest first). */
export async function passwordChangedBy(
  app: SecurityApp,
  userId: string,
  type: 'UserPasswordChanged' | 'UserPasswordReset',
): Promise<string[]> {
  const { rows } = await app.db.pool.query<{ actor: { id: string } }>(
    `SELECT metadata->'actor' AS actor FROM events WHERE type = $2 AND data->>'userId' = $1 ORDER BY position`,
    [userId, type],
  );
  return rows.map((r) => r.actor.id);
}

/** Whether this email and password sign a fresh browser in. */
export async function signsIn(app: SecurityApp, email: string, password: string): Promise<boolean> {
  const client = new TestClient(app.url);
  await client.get('/login');
  return (await client.postForm('/login', { email, password })).status === 302;
}

/**
 * Waits until the audit log, searched for `search`, shows `shows` (by default the searched text itself):
 * the audit projection catches up.
 */
export async function untilAudited(admin: TestClient, search: string, shows = search): Promise<void> {
  await waitFor(
    async () =>
      (await (await admin.get(`/audit?search=${encodeURIComponent(search)}`)).text()).includes(shows),
    `"${shows}" in the audit log searched for "${search}"`,
  );
}

/** The text of an HTML page's main content, or a JSON error's message. */
export async function messageOf(response: Response): Promise<string> {
  const body = await response.text();
  if ((response.headers.get('content-type') ?? '').includes('json')) {
    const json = JSON.parse(body) as { message?: string; error?: { message?: string } };
    return json.message ?? json.error?.message ?? '';
  }
  return (/<main[^>]*>([\s\S]*)<\/main>/.exec(body)?.[1] ?? body)
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/\s+/g, ' ');
}

/** The add/edit competitor form's fields, with an idempotency key (a fresh one unless given). */
export const competitorForm = (name: string, key: string = randomUUID()) => ({
  name,
  website: '',
  segmentId: 'smb',
  threat: 'low',
  headquarters: '',
  _idempotency_key: key,
});

/** Adds a competitor through the form as `client`; its id (the key names it). */
export async function addCompetitorByForm(client: TestClient, name: string): Promise<string> {
  await client.get('/competitors/new');
  const key = randomUUID();
  const response = await client.postForm('/competitors/new', competitorForm(name, key));
  expect(response.status, name).toBe(302);
  return key;
}

/** The flash messages a redirect answer set (read from its cookie, so concurrent answers stay apart). */
export function flashOf(response: Response): string {
  for (const line of response.headers.getSetCookie()) {
    const match = /^rivals_flash=([^.;]+)\./.exec(line);
    if (!match?.[1]) continue;
    const flashes = JSON.parse(Buffer.from(match[1], 'base64url').toString('utf8')) as { text: string }[];
    return flashes.map((f) => f.text).join(' | ');
  }
  return '';
}
