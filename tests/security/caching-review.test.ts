import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appRoutes } from '#web/app.server.ts';
import { TestClient } from '#tests/support/test-client.ts';
import { securityBackends, startSecuritySuite, type SecurityApp } from './support/security-app.ts';

/**
 * What a browser or a cache in between may keep of an answer. A signed-in page holds the user's data
 * and their session's form token: stored, it is shown again by Back after sign-out on a shared computer
 * (history navigation takes a stored page without asking, unless it is `no-store`), and a shared cache
 * has no reason to keep it. Only the hashed assets are public; a table refresh is `private, no-cache`
 * with its ETag (tests/integration/table-etag.test.ts).
 */
describe.each(securityBackends)('what may be cached, on %s', (backend) => {
  let app: SecurityApp;
  let admin: TestClient;
  let competitorId = '';

  beforeAll(async () => {
    ({ app, admin } = await startSecuritySuite(backend));
    const list = await (await admin.get('/competitors')).text();
    competitorId = /data-row-id="([0-9a-f-]{36})"/.exec(list)?.[1] ?? '';
  });
  afterAll(() => app?.close());

  it('every signed-in page, full or refreshed, is no-store unless it is a tagged table refresh', async () => {
    expect(competitorId).not.toBe('');
    const paths = appRoutes
      .filter((def) => def.method === 'GET')
      // A user's page names a user (another one: your own forwards to /account), the rest a competitor;
      // a note's page, one of its note columns.
      .map((def) =>
        def.path
          .replace(':id', def.path.startsWith('/users/') ? app.userIds.editor : competitorId)
          .replace(':column', 'strengths'),
      );
    expect(paths).toContain('/competitors');
    for (const path of paths) {
      const page = await admin.get(path);
      // /login forwards a signed-in browser: that redirect is an answer about this session too.
      expect(page.status, path).toBe(path === '/login' ? 302 : 200);
      expect(page.headers.get('cache-control'), path).toBe('no-store');
      const refresh = await admin.get(path, { xhr: true });
      expect(refresh.status, `${path} (XHR)`).toBe(path === '/login' ? 302 : 200);
      const expected = refresh.headers.get('etag') ? 'private, no-cache' : 'no-store';
      expect(refresh.headers.get('cache-control'), `${path} (XHR)`).toBe(expected);
    }
  });

  it('the sign-in page (its form token) and the answers around sign-in are no-store too', async () => {
    const visitor = new TestClient(app.url);
    const login = await visitor.get('/login');
    expect(login.status).toBe(200);
    expect(login.headers.get('cache-control')).toBe('no-store');
    // Signed out: the redirect to sign-in, and after sign-out the same page's redirect.
    const away = await visitor.get('/competitors');
    expect(away.status).toBe(302);
    expect(away.headers.get('cache-control')).toBe('no-store');
  });
});
