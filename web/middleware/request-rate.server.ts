import type { Middleware } from 'koa';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { TooManyRequestsError } from '#infra/errors.ts';
import type { Logger } from '#infra/logger.ts';
import { addressKey } from '../address-key.ts';

/** Probes and scrapes: a supervisor or load balancer asking must never be refused for load. */
const UNCOUNTED = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * At most `requests` requests per `windowSeconds` from one signed-in user (all their tabs and sessions
 * together) or, signed out, from one client address; past it, 429 with `Retry-After` until the window
 * ends. A person clicking, typing into a search and receiving live refreshes stays far below it; a
 * script looping on pages, or a stuck client, stops taking CPU from everyone else. Counted in this
 * instance's memory: behind a load balancer each instance allows as many (a bound on each instance's
 * work, which is what it protects). Assets are served before this and are not counted. `requests` 0
 * turns it off.
 */
export function requestRateLimit(options: {
  requests: number;
  windowSeconds: number;
  log: Logger;
}): Middleware {
  if (options.requests === 0) return (_ctx, next) => next();
  const limiter = new RateLimiterMemory({ points: options.requests, duration: options.windowSeconds });
  return async (ctx, next) => {
    if (UNCOUNTED.has(ctx.path)) {
      await next();
      return;
    }
    const user = (ctx.state.user as { id: string } | undefined)?.id;
    // Signed out: by address, an IPv6 one by its /64 (one subscriber's whole network).
    const key = user ? `user:${user}` : `address:${addressKey(ctx.ip)}`;
    try {
      await limiter.consume(key);
    } catch (refused) {
      if (!(refused instanceof RateLimiterRes)) throw refused;
      const wait = Math.max(1, Math.ceil(refused.msBeforeNext / 1000));
      // Once per window and key, not once per refused request: a flood would otherwise flood the log too.
      if (refused.consumedPoints === options.requests + 1)
        options.log.warn(
          {
            user,
            address: user ? undefined : ctx.ip,
            limit: options.requests,
            windowSeconds: options.windowSeconds,
          },
          'requests refused for this window: more than the limit',
        );
      throw new TooManyRequestsError(
        `You are sending requests faster than Rivals answers them. Wait ${wait} second${wait === 1 ? '' : 's'} and try again.`,
        wait,
      );
    }
    await next();
  };
}
