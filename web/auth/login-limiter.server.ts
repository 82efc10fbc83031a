import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';

export interface LoginLimiter {
  /** Seconds to wait when this account or address is locked out; 0 when sign-in may be tried. */
  retryAfter(email: string, ip: string): Promise<number>;
  failed(email: string, ip: string): Promise<void>;
  succeeded(email: string): Promise<void>;
}

/** Failed sign-ins allowed per minute: 5 per account, 20 per address (memory embedded, Redis scaled). */
export function createLoginLimiter(redis: Redis | undefined, prefix: string): LoginLimiter {
  const make = (points: number, keyPrefix: string): RateLimiterAbstract =>
    redis
      ? new RateLimiterRedis({ storeClient: redis, points, duration: 60, keyPrefix: `${prefix}${keyPrefix}` })
      : new RateLimiterMemory({ points, duration: 60, keyPrefix });
  const perAccount = make(5, 'login-account');
  const perAddress = make(20, 'login-ip');
  const account = (email: string) => email.trim().toLowerCase();

  return {
    async retryAfter(email, ip) {
      const [a, b] = await Promise.all([perAccount.get(account(email)), perAddress.get(ip)]);
      const blocked = [
        [a, 5],
        [b, 20],
      ] as const;
      let wait = 0;
      for (const [state, points] of blocked) {
        if (state && state.consumedPoints >= points)
          wait = Math.max(wait, Math.ceil(state.msBeforeNext / 1000));
      }
      return wait;
    },
    async failed(email, ip) {
      await Promise.all([perAccount.penalty(account(email), 1), perAddress.penalty(ip, 1)]);
    },
    async succeeded(email) {
      await perAccount.delete(account(email));
    },
  };
}
