import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '#infra/logger.ts';
import { closeRedisClient, createRedisClient, type Redis } from '#infra/redis.ts';
import { createLoginLimiter, type LoginLimiter } from '#web/auth/login-limiter.server.ts';
import { createSessionSignals, type SessionSignal } from '#web/auth/session-signals.server.ts';
import { RedisCommandBus } from '#events/bus/redis-command-bus.ts';
import { addCompetitorCommand, envelope } from '#tests/support/runtime-pieces.ts';
import { startRedis, type Service } from '../cluster/support/services.ts';

/**
 * Sign-in while Redis is away (README, "Outages"). Scaled, the failed-sign-in counts live in Redis; a
 * Redis restart must make sign-in neither fail ("Something went wrong", 500) nor wait. A private Redis on
 * a port of its own is stopped here (`shutdown nosave`, as a crash of a Redis without persistence) and
 * started again; the machine's shared Redis is never touched.
 */
describe('sign-in throttling while Redis is down', () => {
  let service: Service;
  let redis: Redis;
  let limiter: LoginLimiter;
  const log = createLogger('silent');

  /**
   * The limiter's connection has no command timeout here, so a call that waits on Redis waits for the
   * whole outage, and is caught by this bound (in the app it waited the 5 s timeout, then failed).
   */
  const promptly = <T>(call: Promise<T>): Promise<T> =>
    Promise.race([
      call,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('the call waited for Redis to come back')), 10_000),
      ),
    ]);

  beforeAll(async () => {
    service = await startRedis();
    const url = `redis://127.0.0.1:${service.port}`;
    const base = createRedisClient(url, log, { name: 'limiter-outage' });
    redis = base.duplicate({ commandTimeout: undefined });
    base.disconnect();
    redis.on('error', () => undefined);
    await redis.ping();
    limiter = createLoginLimiter(redis, 'outage-test:');
  });

  afterAll(async () => {
    await closeRedisClient(redis);
    await service.destroy();
  });

  it('answers at once with Redis gone, still counts failures on this instance, and uses Redis again after', async () => {
    const ip = '10.1.2.3';
    await limiter.failed('before@rivals.test', ip);
    expect(await limiter.retryAfter('before@rivals.test', ip)).toBe(0);

    await service.stop();
    // Gone as the client sees it: in the moment before it notices, a command is sent on the dying
    // connection and waits for the reconnect (1 run in 7 failed here on that moment).
    const gone = Date.now() + 10_000;
    while (redis.status === 'ready' && Date.now() < gone) await new Promise((r) => setTimeout(r, 20));
    expect(await promptly(limiter.retryAfter('owner@rivals.test', ip))).toBe(0);
    // Sign-in counts each attempt as it starts (attempt), and takes a success back (succeeded).
    for (let i = 0; i < 5; i++) expect(await promptly(limiter.attempt('owner@rivals.test', ip))).toBe(0);
    const wait = await promptly(limiter.retryAfter('owner@rivals.test', ip));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    expect(await promptly(limiter.attempt('owner@rivals.test', ip))).toBeGreaterThanOrEqual(1);
    await promptly(limiter.succeeded('owner@rivals.test', ip));
    expect(await promptly(limiter.retryAfter('owner@rivals.test', ip))).toBe(0);

    await service.start();
    // Back on Redis once the connection is ready again (the restarted Redis kept nothing).
    const deadline = Date.now() + 20_000;
    while (redis.status !== 'ready' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    for (let i = 0; i < 5; i++) expect(await limiter.attempt('after@rivals.test', ip)).toBe(0);
    expect(await redis.keys('outage-test:*')).not.toEqual([]);
    expect(await limiter.retryAfter('after@rivals.test', ip)).toBeGreaterThanOrEqual(1);
  });
});

describe('session signals while Redis is down', () => {
  let service: Service;
  let redis: Redis;
  const log = createLogger('silent');

  beforeAll(async () => {
    service = await startRedis();
    // The app's client: commands wait for Redis up to its command timeout (5 s).
    redis = createRedisClient(`redis://127.0.0.1:${service.port}`, log, { name: 'signals-outage' });
    await redis.ping();
  });

  afterAll(async () => {
    await closeRedisClient(redis);
    await service.destroy();
  });

  it("a sign-out tells this instance's sockets at once instead of waiting for Redis, and goes through Redis again after", async () => {
    const signals = createSessionSignals({ redis, prefix: 'outage-test:', log });
    const heard: SessionSignal[] = [];
    signals.subscribe((signal) => heard.push(signal));
    const hear = async (count: number) => {
      const deadline = Date.now() + 10_000;
      while (heard.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    };
    try {
      await new Promise((r) => setTimeout(r, 200)); // the subscription is made
      await signals.publish({ kind: 'session-ended', sessionId: 'before' });
      await hear(1);
      expect(heard).toEqual([{ kind: 'session-ended', sessionId: 'before' }]);

      await service.stop();
      const deadline = Date.now() + 10_000;
      while (redis.status === 'ready' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const started = Date.now();
      await signals.publish({ kind: 'session-ended', sessionId: 'during' });
      // Before: the publish waited out the 5 s command timeout, and nobody was told.
      expect(Date.now() - started).toBeLessThan(1_000);
      await hear(2);
      expect(heard.at(-1)).toEqual({ kind: 'session-ended', sessionId: 'during' });

      await service.start();
      const back = Date.now() + 20_000;
      while (redis.status !== 'ready' && Date.now() < back) await new Promise((r) => setTimeout(r, 50));
      // The subscriber re-subscribes on its own; a signal through Redis is heard once.
      const through = Date.now() + 20_000;
      while (heard.length < 3 && Date.now() < through) {
        await signals.publish({ kind: 'user-changed', userId: 'after' });
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(heard.at(-1)).toEqual({ kind: 'user-changed', userId: 'after' });
    } finally {
      await signals.close();
    }
  });
});

describe('the command bus while Redis is down', () => {
  let service: Service;
  let redis: Redis;
  let blocking: Redis;
  const log = createLogger('silent');

  beforeAll(async () => {
    service = await startRedis();
    const url = `redis://127.0.0.1:${service.port}`;
    redis = createRedisClient(url, log, { name: 'bus-outage' });
    blocking = createRedisClient(url, log, { name: 'bus-outage-reader', blockMs: 2_000 });
    await redis.ping();
  });

  afterAll(async () => {
    await closeRedisClient(redis);
    await closeRedisClient(blocking);
    await service.destroy();
  });

  it('refuses sends instead of holding them in memory, and does not send them, stale, when Redis is back', async () => {
    const bus = new RedisCommandBus(redis, blocking, 'outage-test:', { add: async () => undefined });
    await service.stop();
    const deadline = Date.now() + 10_000;
    while (redis.status === 'ready' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));

    const sends = await Promise.allSettled(
      Array.from({ length: 50 }, () => bus.send(envelope(addCompetitorCommand('During the outage')))),
    );
    expect(sends.map((s) => s.status)).toEqual(Array(50).fill('rejected'));

    await service.start();
    const back = Date.now() + 20_000;
    while (redis.status !== 'ready' && Date.now() < back) await new Promise((r) => setTimeout(r, 50));
    // Before: the 50 waited in the client's offline queue for the whole outage and were written now.
    expect(await redis.xlen('outage-test:commands')).toBe(0);
    await bus.send(envelope(addCompetitorCommand('After the outage')));
    expect(await redis.xlen('outage-test:commands')).toBe(1);
  });
});
