import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '#infra/logger.ts';
import { createRedisClient, type Redis } from '#infra/redis.ts';
import { createLoginLimiter, type LoginLimiter } from '#web/auth/login-limiter.server.ts';
import { backendUrl, databaseBackends, redisBackends } from '#tests/support/environment.ts';
import { withSuiteApp } from '#tests/support/suite-app.ts';
import { TEST_PASSWORD, testEmails, type TestApp } from '#tests/support/test-app.ts';
import { TestClient } from '#tests/support/test-client.ts';

/**
 * Sign-in throttling (5 failures per account per minute → 429 with Retry-After), and the body limits
 * every request passes through: 64 kB and 8 levels of nesting, refused with a readable message.
 */

const INCORRECT = 'Email or password is incorrect.';
/** What a leaked stack trace or framework error would look like in a response body. */
const STACK = /\n\s+at\s|\.ts:\d+|node_modules|PayloadTooLargeError|SyntaxError|stack/i;

describe.each(databaseBackends)('login rate limit and body limits (%s)', (backend) => {
  let app: TestApp;
  /** Signed in before any lock-out (the lock-out test locks the editor). */
  let admin: TestClient;

  withSuiteApp(backend, (started, signedIn) => {
    app = started;
    admin = signedIn;
  });

  it('locks one account after 5 failed sign-ins in a minute, and only that account', async () => {
    const client = new TestClient(app.url);
    expect((await client.get('/login')).status).toBe(200);
    const attempt = (email: string, password: string) => client.postForm('/login', { email, password });

    for (let i = 1; i <= 5; i++) {
      const response = await attempt(testEmails.editor, `wrong-password-${i}`);
      expect(response.status, `failure ${i}`).toBe(401);
      expect(response.headers.get('retry-after'), `failure ${i}`).toBeNull();
      expect(await response.text(), `failure ${i}`).toContain(INCORRECT);
    }

    // The 6th within the minute: refused before the password is even looked at.
    const limited = await attempt(testEmails.editor, 'wrong-password-6');
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const page = await limited.text();
    expect(page).toContain(`Too many failed sign-ins. Try again in ${retryAfter} second`);
    expect(page).not.toContain(INCORRECT);

    // The right password does not get through while the account is locked, and opens no session.
    const right = await attempt(testEmails.editor, TEST_PASSWORD);
    expect(right.status).toBe(429);
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(right.headers.getSetCookie().some((line) => line.startsWith('rivals_session='))).toBe(false);
    // Spelling the email differently is the same account.
    const shouted = await attempt(` ${testEmails.editor.toUpperCase()} `, TEST_PASSWORD);
    expect(shouted.status).toBe(429);

    // XHR callers get the same answer as JSON.
    const xhr = await client.postJson('/login', { email: testEmails.editor, password: TEST_PASSWORD });
    expect(xhr.status).toBe(429);
    expect(Number(xhr.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await xhr.json()).toEqual({
      error: {
        code: 'rate_limited',
        message: expect.stringMatching(/^Too many failed sign-ins\. Try again in \d+ seconds?\.$/),
      },
    });

    // Another account from the same client and address is not limited by that.
    const other = await attempt(testEmails.viewer, TEST_PASSWORD);
    expect(other.status).toBe(302);
    expect(other.headers.get('location')).toBe('/competitors');
    expect((await client.get('/competitors')).status).toBe(200);
  });

  it('counts sign-ins sent at once: of 12 guesses at one account, 5 are checked and the rest refused', async () => {
    const client = new TestClient(app.url);
    expect((await client.get('/login')).status).toBe(200);
    const email = `burst-${randomUUID()}@rivals.test`;
    // Each guess used to be counted only once its password had been hashed (a third of a second), so
    // guesses sent together all passed the check before any was counted.
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => client.postForm('/login', { email, password: `guess-${i}` })),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array<number>(5).fill(401), ...Array<number>(7).fill(429)]);
    // Refused guesses are not failures: the address keeps its other 15 for the minute.
    for (let i = 0; i < 3; i++) {
      const other = await client.postForm('/login', { email: `other-${i}-${email}`, password: 'x' });
      expect(other.status).toBe(401);
    }
  });

  it('refuses a form over 64 kB with a readable 413 and no stack trace', async () => {
    const big = 'x'.repeat(100 * 1024);

    const form = await admin.postForm('/competitors/new', { name: 'Big', headquarters: big });
    expect(form.status).toBe(413);
    const html = await form.text();
    expect(html).toContain(
      'The request is too large: at most 64 kB can be sent here, so nothing was saved. Shorten what you sent and send it again.',
    );
    expect(html).not.toMatch(STACK);

    const json = await admin.postJson('/competitors/new', { name: 'Big', headquarters: big });
    expect(json.status).toBe(413);
    const body = (await json.json()) as { error: { code: string; message: string } };
    expect(body.error).toMatchObject({
      code: 'too_large',
      message:
        'The request is too large: at most 64 kB can be sent here, so nothing was saved. Shorten what you sent and send it again.',
    });
    expect(JSON.stringify(body)).not.toMatch(STACK);

    // Signed out too: the limit applies before anything else looks at the request.
    const visitor = new TestClient(app.url);
    await visitor.get('/login');
    const login = await visitor.postForm('/login', { email: testEmails.admin, password: big });
    expect(login.status).toBe(413);
    expect(await login.text()).toContain(
      'The request is too large: at most 64 kB can be sent here, so nothing was saved. Shorten what you sent and send it again.',
    );

    // A form just under the limit is read normally (the form itself then says what is wrong).
    const fits = await admin.postForm('/competitors/new', { name: '', headquarters: 'x'.repeat(60 * 1024) });
    expect(fits.status).toBe(400);
    expect(await fits.text()).not.toContain('The request is too large');
  });

  it('replaces an unusable X-Request-Id instead of letting it break the command it correlates', async () => {
    expect((await admin.get('/competitors/new')).status).toBe(200);
    const refused = 'r'.repeat(150); // longer than the 64 the app accepts and the 100 a command allows
    const response = await fetch(`${app.url}/competitors/new`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        Cookie: admin.cookieHeader(),
        Origin: app.url,
        'Content-Type': 'application/x-www-form-urlencoded',
        'X-Request-Id': refused,
      },
      body: new URLSearchParams({
        _csrf: admin.csrfToken,
        name: 'Request Id Corp',
        website: '',
        segmentId: 'smb',
        threat: 'low',
        headquarters: '',
      }),
    });
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.status).toBe(302);
    // Saved and visible at once: the redirect goes to the new competitor (not to the list with "saved, the
    // list will show it in a moment"), and its page is there.
    const location = response.headers.get('location') ?? '';
    expect(location).toMatch(/^\/competitors\/[0-9a-f-]{36}$/);
    const shown = await admin.get(location);
    expect(shown.status).toBe(200);
    expect(await shown.text()).toContain('Request Id Corp');
    const { rows } = await app.db.pool.query<{ correlation: string }>(
      `SELECT metadata->>'correlationId' AS correlation FROM events
       WHERE type = 'CompetitorAdded' AND data->>'name' = 'Request Id Corp'`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.correlation).not.toBe(refused);

    // A sane one from a proxy is kept.
    const sane = `proxy-${'a'.repeat(20)}`;
    const echoed = await fetch(`${app.url}/login`, { headers: { 'X-Request-Id': sane } });
    expect(echoed.headers.get('x-request-id')).toBe(sane);
  });

  it('refuses JSON nested deeper than 8 levels with 400 "nested too deeply"', async () => {
    const nest = (levels: number): Record<string, unknown> => {
      let value: Record<string, unknown> = { leaf: 'x' };
      for (let i = 1; i < levels; i++) value = { inner: value };
      return value;
    };

    for (const levels of [9, 50]) {
      const response = await admin.postJson('/competitors/new', nest(levels));
      expect(response.status, `${levels} levels`).toBe(400);
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('validation');
      expect(body.error.message).toMatch(/nested too deeply/);
      expect(JSON.stringify(body)).not.toMatch(STACK);
    }

    // 8 levels is still allowed through to the route (which then rejects the fields themselves).
    const eight = await admin.postJson('/competitors/new', nest(8));
    expect(eight.status).toBe(400);
    expect(await eight.text()).not.toMatch(/nested too deeply/);

    // A browser form page gets the same message as HTML.
    const page = await admin.postJson('/competitors/new', nest(9), { xhr: false });
    expect(page.status).toBe(400);
    expect(await page.text()).toMatch(/nested too deeply/);

    // Broken JSON is a readable 400 as well.
    const broken = await fetch(`${app.url}/competitors/new`, {
      method: 'POST',
      headers: {
        Cookie: admin.cookieHeader(),
        'X-CSRF-Token': admin.csrfToken,
        'X-Requested-With': 'XMLHttpRequest',
        'Content-Type': 'application/json',
        Origin: app.url,
      },
      body: '{"name": "unterminated',
    });
    expect(broken.status).toBe(400);
    const error = (await broken.json()) as { error: { message: string } };
    expect(error.error.message).toBe('The request body could not be read.');
  });
});

/**
 * The limiter itself, on every store it runs on: memory (embedded), and Redis (scaled) unless
 * RIVALS_TEST_SKIP names redis.
 */
describe.each(redisBackends)('login limiter (%s)', (store) => {
  let redis: Redis | undefined;
  let limiter: LoginLimiter;
  const prefix = `test-limiter-${randomUUID()}:`;

  beforeAll(async () => {
    if (store === 'redis') {
      redis = createRedisClient(backendUrl('redis'), createLogger('silent'), { name: 'limiter-test' });
      // Connected first, as in the app (the bus connects before requests come): until then the limiter
      // counts in memory, as it does while Redis is unreachable (tests/fault/redis-outage.test.ts).
      await redis.ping();
    }
    limiter = createLoginLimiter(redis, prefix);
  });

  afterAll(async () => {
    if (!redis) return;
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('allows 5 failures per account and address and 20 per address a minute; success clears the pair', async () => {
    const ip = `10.0.0.${Math.floor(Math.random() * 200) + 1}`;
    // Each sign-in is counted as it starts (attempt), and taken back when it succeeds.
    for (let i = 0; i < 4; i++) expect(await limiter.attempt('a@rivals.test', ip)).toBe(0);
    expect(await limiter.retryAfter('a@rivals.test', ip)).toBe(0);
    expect(await limiter.attempt(' A@Rivals.Test ', ip)).toBe(0);
    const wait = await limiter.retryAfter('a@rivals.test', ip);
    expect(wait).toBeGreaterThanOrEqual(59);
    expect(wait).toBeLessThanOrEqual(60);
    // The 6th is refused, and not counted: the address has 15 failures left, not 14.
    expect(await limiter.attempt('a@rivals.test', ip)).toBeGreaterThanOrEqual(59);
    expect(await limiter.retryAfter('b@rivals.test', ip)).toBe(0);

    // A success (after 4 failures) clears its pair and is not a failure of the address either.
    const other = `10.1.0.${Math.floor(Math.random() * 200) + 1}`;
    for (let i = 0; i < 5; i++) expect(await limiter.attempt('c@rivals.test', other)).toBe(0);
    await limiter.succeeded('c@rivals.test', other);
    expect(await limiter.retryAfter('c@rivals.test', other)).toBe(0);
    expect(await limiter.attempt('c@rivals.test', other)).toBe(0);

    // 20 failures from one address across many accounts lock the address for every account.
    for (let i = 5; i < 19; i++) expect(await limiter.attempt(`user${i}@rivals.test`, ip)).toBe(0);
    expect(await limiter.retryAfter('fresh@rivals.test', ip)).toBe(0);
    expect(await limiter.attempt('user19@rivals.test', ip)).toBe(0);
    expect(await limiter.retryAfter('fresh@rivals.test', ip)).toBeGreaterThanOrEqual(59);
    expect(await limiter.attempt('fresh@rivals.test', ip)).toBeGreaterThanOrEqual(59);
    expect(await limiter.retryAfter('fresh@rivals.test', '10.9.9.9')).toBe(0);
  });
});
