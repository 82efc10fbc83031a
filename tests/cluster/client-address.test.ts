import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInFrom } from './support/from-address.ts';
import { Instance } from './support/instances.ts';
import { startNginx, startPostgres, startRedis, type Service } from './support/services.ts';

/**
 * Behind nginx over plain HTTP (docker-compose.yml), every request reaches the app from nginx's address.
 * Sign-in limits are per client address (docs/decisions/0009-login-lockout.md), so the app must take the
 * address nginx appends to X-Forwarded-For (`TRUST_PROXY=http`), or 20 mistyped passwords from anyone
 * lock everybody out. Clients here connect from different loopback addresses (127.0.0.2, 127.0.0.3).
 */
const ADMIN_EMAIL = 'admin@proxy.test';
const ADMIN_PASSWORD = 'proxy-admin-password-0123';

describe('client addresses behind nginx', () => {
  let postgres: Service;
  let redis: Service;
  let nginx: Service;
  let app: Instance | undefined;

  beforeAll(async () => {
    [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
    app = await Instance.start('app', {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${postgres.port}/rivals`,
      REDIS_URL: `redis://127.0.0.1:${redis.port}`,
      SESSION_SECRET: randomBytes(32).toString('hex'),
      LOG_LEVEL: 'warn',
      DEMO_DATA: 'false',
      ADMIN_EMAIL,
      ADMIN_PASSWORD,
      TRUST_PROXY: 'http',
    });
    nginx = await startNginx([app.port]);
  }, 240_000);

  afterAll(async () => {
    await app?.stop();
    // Private services only: the machine's shared Postgres and Redis are never touched.
    await Promise.all([nginx?.destroy(), redis?.destroy(), postgres?.destroy()]);
  }, 60_000);

  it('20 failed sign-ins from one address lock that address, not a user signing in from another', async () => {
    // The admin can sign in once the user list has caught up (waited for from an address of its own).
    const deadline = Date.now() + 60_000;
    while ((await signInFrom(nginx.port, '127.0.0.4', ADMIN_EMAIL, ADMIN_PASSWORD)) !== 302) {
      if (Date.now() > deadline) throw new Error(`the admin cannot sign in:\n${app?.logTail()}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    // The attacker sprays many accounts, each time claiming another address in X-Forwarded-For: only the
    // address nginx appends counts.
    for (let i = 0; i < 20; i++) {
      const forged = { 'X-Forwarded-For': `10.0.${i}.1` };
      expect(
        await signInFrom(nginx.port, '127.0.0.2', `nobody${i}@proxy.test`, 'wrong-password', {
          headers: forged,
        }),
      ).toBe(401);
    }
    expect(await signInFrom(nginx.port, '127.0.0.2', ADMIN_EMAIL, ADMIN_PASSWORD)).toBe(429);
    // Before: every client had nginx's address, so the admin was locked out too.
    expect(await signInFrom(nginx.port, '127.0.0.3', ADMIN_EMAIL, ADMIN_PASSWORD)).toBe(302);
  }, 120_000);
});
