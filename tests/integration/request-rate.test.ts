import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseBackends } from '#tests/support/environment.ts';
import { startTestApp, TEST_METRICS_TOKEN, type TestApp } from '#tests/support/test-app.ts';
import type { TestClient } from '#tests/support/test-client.ts';

/**
 * One user's requests per window are bounded (RATE_LIMIT_REQUESTS per RATE_LIMIT_WINDOW_SECONDS): a script
 * looping on pages gets 429 with Retry-After and a sentence, everyone else is served as before, probes are
 * never counted, and a refused change is not made.
 */

const LIMIT = 12;

describe.each(databaseBackends)('the per-user request limit on %s', (backend) => {
  let app: TestApp;
  let editor: TestClient;
  let viewer: TestClient;

  beforeAll(async () => {
    app = await startTestApp(backend, {
      demoData: false,
      env: { RATE_LIMIT_REQUESTS: String(LIMIT), RATE_LIMIT_WINDOW_SECONDS: '600' },
    });
    // Signing in asks /login twice signed out (the address's count) and /competitors once signed in.
    editor = await app.client('editor');
    viewer = await app.client('viewer');
  });
  afterAll(async () => app.close());

  it('past the limit a user gets 429 with Retry-After and a sentence; another user is still served; nothing refused is made', async () => {
    for (let i = 1; i < LIMIT; i++)
      expect((await editor.get('/competitors')).status, `request ${i + 1}`).toBe(200);

    const page = await editor.get('/competitors');
    expect(page.status).toBe(429);
    const wait = Number(page.headers.get('retry-after'));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(600);
    expect(await page.text()).toContain('You are sending requests faster than Rivals answers them. Wait');

    const xhr = await editor.get('/competitors', { xhr: true });
    expect(xhr.status).toBe(429);
    expect(await xhr.json()).toMatchObject({
      error: { code: 'rate_limited', message: expect.stringMatching(/^You are sending requests faster/) },
    });

    const added = await editor.postForm('/competitors/new', {
      name: 'Made While Refused',
      website: '',
      segmentId: 'smb',
      threat: 'low',
      headquarters: '',
    });
    expect(added.status).toBe(429);

    // Counted per user: the viewer's own count is untouched, and the refused add made nothing.
    const list = await viewer.get('/competitors?search=refused&sort=&page=1&perPage=15');
    expect(list.status).toBe(200);
    expect(await list.text()).not.toContain('Made While Refused');
  });

  it('signed out, requests are counted per address; health, readiness and metrics are never counted', async () => {
    const anonymous = await app.client();
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 1; i++) statuses.push((await anonymous.get('/login')).status);
    const refusedAt = statuses.indexOf(429);
    // The sign-ins above already used a few of this address's requests.
    expect(refusedAt).toBeGreaterThan(0);
    expect(statuses.slice(0, refusedAt).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(refusedAt).every((s) => s === 429)).toBe(true);

    for (let i = 0; i < LIMIT + 5; i++) {
      expect((await anonymous.get('/healthz')).status).toBe(200);
      expect((await anonymous.get('/readyz')).status).toBe(200);
      const metrics = await anonymous.get('/metrics', {
        headers: { Authorization: `Bearer ${TEST_METRICS_TOKEN}` },
      });
      expect(metrics.status).toBe(200);
    }
  });
});
