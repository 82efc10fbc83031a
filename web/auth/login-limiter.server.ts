import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';

export interface LoginLimiter {
  /** Seconds to wait when this account from this address, or this address, is locked out; 0 when free. */
  retryAfter(email: string, ip: string): Promise<number>;
  /**
   * Counts a sign-in as failed before its password is checked, in the same step as the check (so
   * guesses sent at once are counted one by one), and says how long to wait when it is one too many
   * (a refused one is not counted); 0 when it may go ahead. `succeeded` takes the count back.
   */
  attempt(email: string, ip: string): Promise<number>;
  failed(email: string, ip: string): Promise<void>;
  succeeded(email: string, ip: string): Promise<void>;
}

const PER_PAIR = 5;
const PER_ADDRESS = 20;

/**
 * Failed sign-ins allowed per minute (memory embedded, Redis scaled, this instance's memory while Redis
 * is unreachable), chosen so an attacker cannot use the lock against someone else
 * (docs/decisions/0009-login-lockout.md):
 * - 5 per account *and address*: guessing one account from one place stops, but the owner signing in
 *   from their own address is never locked by failures sent from elsewhere;
 * - 20 per address across all accounts: one place cannot spray many accounts.
 * A success clears that pair.
 */
export function createLoginLimiter(redis: Redis | undefined, prefix: string): LoginLimiter {
  /** Each limit in memory, and (scaled) in Redis with the memory one standing in while Redis is away. */
  const make = (points: number, keyPrefix: string) => {
    const memory = new RateLimiterMemory({ points, duration: 60, keyPrefix });
    if (!redis) return { shared: memory as RateLimiterAbstract, memory };
    // While Redis is away (a restart), this instance counts on its own instead of waiting out the command
    // timeout and failing the sign-in: the limits hold per instance until Redis is back.
    const shared = new RateLimiterRedis({
      storeClient: redis,
      points,
      duration: 60,
      keyPrefix: `${prefix}${keyPrefix}`,
      insuranceLimiter: memory,
      rejectIfRedisNotReady: true,
    });
    return { shared, memory };
  };
  const perPair = make(PER_PAIR, 'login-pair');
  const perAddress = make(PER_ADDRESS, 'login-ip');
  const pair = (email: string, ip: string) => `${email.trim().toLowerCase()}|${ip}`;

  return {
    async retryAfter(email, ip) {
      const [a, b] = await Promise.all([perPair.shared.get(pair(email, ip)), perAddress.shared.get(ip)]);
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
      await Promise.all([perPair.shared.penalty(pair(email, ip), 1), perAddress.shared.penalty(ip, 1)]);
    },
    async attempt(email, ip) {
      const keys = [
        [perPair.shared, pair(email, ip)],
        [perAddress.shared, ip],
      ] as const;
      // A consume counts and checks in one step (Redis: one script); over the limit it rejects with the
      // count it made, which is taken back: only sign-ins that were checked are failures.
      const counted = await Promise.allSettled(keys.map(([limit, key]) => limit.consume(key, 1)));
      let wait = 0;
      for (const result of counted) {
        if (result.status === 'fulfilled') continue;
        if (!(result.reason instanceof RateLimiterRes)) throw result.reason;
        wait = Math.max(wait, Math.ceil(result.reason.msBeforeNext / 1000), 1);
      }
      if (wait > 0) await Promise.all(keys.map(([limit, key]) => limit.reward(key, 1)));
      return wait;
    },
    async succeeded(email, ip) {
      // The library's delete does not look at the connection first (its reads and counts do): with Redis
      // away it would hold the sign-in for the whole command timeout.
      const away = redis && redis.status !== 'ready';
      await (away ? perPair.memory : perPair.shared).delete(pair(email, ip));
      // The attempt was counted against the address as a failure before its password was checked.
      await (away ? perAddress.memory : perAddress.shared).reward(ip, 1);
    },
  };
}
