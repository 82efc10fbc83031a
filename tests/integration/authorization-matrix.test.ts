import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '#events/user/fields.ts';
import { createAccount } from '#services/user/accounts.ts';
import { appRoutes } from '#web/app.server.ts';
import { can, permissions, type Action } from '#events/user/permissions.ts';
import type { RouteDef } from '#web/routing.server.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { addCompetitorCommand, envelope } from '#tests/support/runtime-pieces.ts';
import { startTestApp, TEST_PASSWORD, testEmails, type TestApp } from '#tests/support/test-app.ts';
import { TestClient } from '#tests/support/test-client.ts';

/**
 * The authorization matrix: every route of `appRoutes` × {signed out, viewer, editor, admin}, expected
 * from the one permissions table (`public` or `can(role, action)`), checked against the real app. Denials
 * must come from the guard (302 to /login, 401, 403); allowed requests must get past it. POSTs always
 * carry a valid CSRF token so CSRF cannot mask the guard, and the POSTs that change state when allowed
 * (delete a competitor, disable/enable a user) aim at throwaway targets made for this test.
 */

type Who = Role | 'signed-out';
const everyone: readonly Who[] = ['signed-out', 'viewer', 'editor', 'admin'];

/**
 * The expectation, from the permissions table alone: `public` is for anyone, `authenticated` for any
 * signed-in role (such a route checks finer actions inside), anything else is `can(role, action)`.
 */
function allowed(def: RouteDef, who: Who): boolean {
  const action: string = def.action;
  if (action === 'public') return true;
  if (who === 'signed-out') return false;
  if (action === 'authenticated') return true;
  if (!Object.hasOwn(permissions, action))
    throw new Error(`${def.method} ${def.path}: unknown action ${action}`);
  return can(who, action as Action);
}

const key = (def: RouteDef) => `${def.method} ${def.path}`;
const pairs = appRoutes.flatMap((def) =>
  everyone.map((who) => ({ def, who, name: `${key(def)} as ${who}` })),
);

async function waitForRow(app: TestApp, sql: string, id: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const { rows } = await app.db.pool.query(sql, [id]);
    if (rows.length > 0) return;
    await sleep(20);
  }
  throw new Error(`${id} did not appear (${sql})`);
}

describe.each(databaseBackends)('authorization matrix (%s)', (backend) => {
  let app: TestApp;
  const clients = new Map<Role, TestClient>();
  /** Path parameters per route: real, existing targets; throwaways where an allowed POST changes them. */
  const targets = { competitor: '', doomedCompetitor: '', user: '', throwawayUser: '' };
  const tally = { allowed: 0, denied: 0 };

  beforeAll(async () => {
    app = await startTestApp(backend);
    for (const role of ['viewer', 'editor', 'admin'] as const) clients.set(role, await app.client(role));

    const { rows } = await app.db.pool.query<{ id: string }>('SELECT id FROM competitor_list LIMIT 1');
    targets.competitor = rows[0]?.id ?? '';
    expect(targets.competitor).toMatch(/^[0-9a-f-]{36}$/);
    targets.user = app.userIds.viewer;

    // Only the admin may delete; it deletes this one, never the shared target.
    const doomed = addCompetitorCommand('Matrix Throwaway Ltd');
    const added = await app.runtime.route(envelope(doomed));
    expect(added.status).toBe('accepted');
    targets.doomedCompetitor = doomed.payload.competitorId;
    await waitForRow(app, 'SELECT 1 FROM competitor_list WHERE id = $1', targets.doomedCompetitor);

    // Only the admin may disable/enable; it does so to this user, never to the test users.
    const { userId, outcome } = await createAccount(
      app.db.pool,
      (command) => app.runtime.route(envelope(command)),
      {
        email: 'matrix-throwaway@rivals.test',
        displayName: 'Matrix Throwaway',
        role: 'viewer',
        password: TEST_PASSWORD,
      },
    );
    expect(outcome?.status).toBe('accepted');
    targets.throwawayUser = userId;
    await waitForRow(app, 'SELECT 1 FROM user_list WHERE id = $1', userId);
  });

  afterAll(async () => {
    try {
      // Whichever pairs ran, in whichever order: the state-changing POSTs left the shared targets alone.
      if (app) await expectSharedTargetsUntouched();
      if (tally.allowed + tally.denied > 0)
        console.log(
          `authorization matrix (${backend}): ${tally.allowed + tally.denied} of ${pairs.length} pairs checked ` +
            `(${tally.allowed} allowed, ${tally.denied} denied)`,
        );
    } finally {
      await app?.close();
    }
  });

  /** The shared competitor still exists and the test users keep their roles, enabled. */
  async function expectSharedTargetsUntouched(): Promise<void> {
    const { rows: competitors } = await app.db.pool.query<{ id: string }>(
      'SELECT id FROM competitor_list WHERE id = $1',
      [targets.competitor],
    );
    expect(competitors.map((r) => r.id)).toEqual([targets.competitor]);
    const { rows: users } = await app.db.pool.query<{ id: string; role: string; disabled: boolean }>(
      'SELECT id, role, disabled FROM user_list WHERE id = ANY($1) ORDER BY email',
      [[app.userIds.admin, app.userIds.editor, app.userIds.viewer]],
    );
    expect(users).toEqual([
      { id: app.userIds.admin, role: 'admin', disabled: false },
      { id: app.userIds.editor, role: 'editor', disabled: false },
      { id: app.userIds.viewer, role: 'viewer', disabled: false },
    ]);
  }

  /** The concrete path of a route: `:id` becomes a real competitor or user id, `:column` a note column. */
  function pathOf(def: RouteDef): string {
    if (def.path === '/competitors/:id/delete') return `/competitors/${targets.doomedCompetitor}/delete`;
    if (/^\/users\/:id\/(disable|enable)$/.test(def.path))
      return def.path.replace(':id', targets.throwawayUser);
    if (def.path.startsWith('/users/:id')) return def.path.replace(':id', targets.user);
    return def.path.replace(':id', targets.competitor).replace(':column', 'strengths');
  }

  /**
   * A client for one check. Signed out: a fresh visitor (anonymous CSRF cookie from GET /login).
   * Signed in: the shared client of that role, except for the routes that would end or replace its
   * session (sign-in, sign-out), which get their own throwaway signed-in client.
   */
  async function clientFor(def: RouteDef, who: Who): Promise<TestClient> {
    if (who === 'signed-out') {
      const visitor = new TestClient(app.url);
      await visitor.get('/login');
      return visitor;
    }
    if (def.method === 'POST' && (def.path === '/login' || def.path === '/logout')) return app.client(who);
    const shared = clients.get(who);
    if (!shared) throw new Error(`no ${who} client`);
    // Refresh the CSRF token from a page this role may see.
    if (def.method === 'POST') expect((await shared.get('/competitors')).status).toBe(200);
    return shared;
  }

  /** POST bodies: harmless (an empty form that validation refuses) unless the route needs more to answer. */
  function bodyOf(def: RouteDef, who: Who): Record<string, string> {
    // Signing in is public: a (fresh) visitor signs in as the viewer, a signed-in client as itself.
    if (def.path === '/login')
      return { email: testEmails[who === 'signed-out' ? 'viewer' : who], password: TEST_PASSWORD };
    return {};
  }

  /** What an allowed request answers (the handler ran: the guard let it through). */
  function expectAllowedAnswer(def: RouteDef, who: Who, response: Response): void {
    const location = response.headers.get('location') ?? '';
    expect(response.status).not.toBe(401);
    expect(response.status).not.toBe(403);
    expect(location).not.toMatch(/^\/login\?next=/);
    const expected: Record<string, [number | undefined, string?]> = {
      'GET /login': who === 'signed-out' ? [200] : [302, '/competitors'],
      'POST /login': [302, '/competitors'],
      'POST /logout': [302, '/login'],
      'POST /competitors/new': [400],
      'POST /competitors/:id/edit': [400],
      'POST /competitors/:id/notes/:column': [400],
      'POST /competitors/:id/delete': [302, '/competitors'],
      'POST /users': [400],
      'POST /users/:id/role': [400],
      'POST /users/:id/password': [400],
      'POST /users/:id/disable': [302, '/users'],
      'POST /users/:id/enable': [302, '/users'],
      'POST /ranking/move': [400],
      'POST /segments/move': [400],
    };
    // Pages answer 200; a POST not listed here gets the general checks above only.
    const [status, redirect] = expected[key(def)] ?? (def.method === 'GET' ? [200] : [undefined]);
    if (status !== undefined) expect(response.status).toBe(status);
    if (redirect !== undefined) expect(location).toBe(redirect);
  }

  it.each(pairs)('$name', async ({ def, who }) => {
    const path = pathOf(def);
    const client = await clientFor(def, who);
    const response =
      def.method === 'GET' ? await client.get(path) : await client.postForm(path, bodyOf(def, who));
    const body = await response.text();

    if (allowed(def, who)) {
      expectAllowedAnswer(def, who, response);
      tally.allowed += 1;
    } else if (who === 'signed-out' && def.method === 'GET') {
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toBe(`/login?next=${encodeURIComponent(path)}`);
      tally.denied += 1;
    } else if (who === 'signed-out') {
      expect(response.status).toBe(401);
      expect(body).toContain('Please sign in to continue.');
      tally.denied += 1;
    } else {
      expect(response.status).toBe(403);
      expect(body).toContain('You do not have permission to do that.');
      tally.denied += 1;
    }
  });

  it('the state-changing POSTs aim at throwaway targets, and the shared ones are still there', async () => {
    for (const path of ['/competitors/:id/delete', '/users/:id/disable', '/users/:id/enable']) {
      const def = appRoutes.find((d) => d.method === 'POST' && d.path === path);
      if (!def) throw new Error(`no route POST ${path}`);
      const target = path.startsWith('/users') ? targets.throwawayUser : targets.doomedCompetitor;
      expect(pathOf(def)).toBe(path.replace(':id', target));
    }
    // Also checked after all the pairs (afterAll), whatever order they ran in.
    await expectSharedTargetsUntouched();
  });

  it.each(appRoutes.filter((def) => def.method === 'GET' && def.action !== 'public'))(
    'signed-out XHR GET $path → 401 JSON',
    async (def) => {
      const response = await new TestClient(app.url).get(pathOf(def), { xhr: true });
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toContain('application/json');
      expect(await response.json()).toEqual({
        error: { code: 'unauthorized', message: expect.stringMatching(/\S/) },
      });
    },
  );

  it.each(appRoutes.filter((def) => def.method === 'GET' && def.action !== 'public'))(
    'signed-out HEAD $path → the same redirect as GET',
    async (def) => {
      const path = pathOf(def);
      const response = await fetch(app.url + path, { method: 'HEAD', redirect: 'manual' });
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toBe(`/login?next=${encodeURIComponent(path)}`);
    },
  );

  it('has one check per route × role pair', () => {
    expect(pairs).toHaveLength(appRoutes.length * everyone.length);
    expect(new Set(pairs.map((p) => p.name)).size).toBe(pairs.length);
  });
});
