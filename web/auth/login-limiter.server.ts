import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';

export interface LoginLimiter {
  /** Seconds to wait when this account from this address, or this address, is locked out; 0 when free. */
  retryAfter(email: string, ip: string): Promise<number>;
  failed(email: string, ip: string): Promise<void>;
  succeeded(email: string, ip: string): Promise<void>;
}

const PER_PAIR = 5;
const PER_ADDRESS = 20;

/**
 * Failed sign-ins allowed per minute (memory embedded, Redis scaled), chosen so an attacker cannot use
 * the lock against someone else (docs/decisions/0009-login-lockout.md):
 * - 5 per account *and address*: guessing one account from one place stops, but the owner signing in
 *   from their own address is never locked by failures sent from elsewhere;
 * - 20 per address across all accounts: one place cannot spray many accounts.
 * A success clears that pair.
 */
export function createLoginLimiter(redis: Redis | undefined, prefix: string): LoginLimiter {
  const make = (points: number, keyPrefix: string): RateLimiterAbstract =>
    redis
      ? new RateLimiterRedis({ storeClient: redis, points, duration: 60, keyPrefix: `${prefix}${keyPrefix}` })
      : new RateLimiterMemory({ points, duration: 60, keyPrefix });
  const perPair = make(PER_PAIR, 'login-pair');
  const perAddress = make(PER_ADDRESS, 'login-ip');
  const pair = (email: string, ip: string) => `${email.trim().toLowerCase()}|${ip}`;

  return {
    async retryAfter(email, ip) {
      const [a, b] = await Promise.all([perPair.get(pair(email, ip)), perAddress.get(ip)]);
      const blocked = [
        [a, PER_PAIR],
        [b, PER_ADDRESS],
      ] as const;
      let wait = 0;
      for (const [state, points] of blocked) {
        if (state && state.consumedPoints >= points)
          wait = Math.max(wait, Math.ceil(state.msBeforeNext / 1000));
      }
      return wait;
    },
    async failed(email, ip) {
      await Promise.all([perPair.penalty(pair(email, ip), 1), perAddress.penalty(ip, 1)]);
    },
    async succeeded(email, ip) {
      await perPair.delete(pair(email, ip));
    },
  };
}
