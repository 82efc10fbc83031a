import { EventEmitter } from 'node:events';
import { z } from 'zod';
import type { Logger } from '#infra/logger.ts';
import { closeRedisClient, type Redis } from '#infra/redis.ts';

/**
 * "A session or a user changed": every instance must hear it, because a live socket bound to that
 * session may sit on any of them. Sign-out names the session; a role change, disable or enable, or a
 * sign-in that ended the user's least recently used sessions (decision 0027) names the user. Listeners re-check what they hold against the database, so a signal only says *look again* and
 * carries nothing a forged or lost message could abuse (expiry has its own timer on each socket).
 */
export const sessionSignalSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('session-ended'), sessionId: z.string().min(1).max(100) }),
  z.object({ kind: z.literal('user-changed'), userId: z.string().min(1).max(100) }),
]);
export type SessionSignal = z.infer<typeof sessionSignalSchema>;

export interface SessionSignals {
  publish(signal: SessionSignal): Promise<void>;
  subscribe(listener: (signal: SessionSignal) => void): () => void;
  close(): Promise<void>;
}

/** In-process (embedded: one process holds every socket) or Redis pub/sub (scaled: every instance). */
export function createSessionSignals(options: {
  redis?: Redis;
  prefix: string;
  log: Logger;
}): SessionSignals {
  const { redis, prefix, log } = options;
  const local = new EventEmitter();
  local.setMaxListeners(0);
  const deliver = (signal: SessionSignal) => local.emit('signal', signal);
  const subscribe = (listener: (signal: SessionSignal) => void) => {
    const safe = (signal: SessionSignal) => {
      try {
        listener(signal);
      } catch (error) {
        log.error({ err: error }, 'session signal listener failed');
      }
    };
    local.on('signal', safe);
    return () => void local.off('signal', safe);
  };
  if (!redis) {
    return {
      async publish(signal) {
        queueMicrotask(() => deliver(signal));
      },
      subscribe,
      async close() {
        local.removeAllListeners();
      },
    };
  }

  const channel = `${prefix}session-signals`;
  const subscriber = redis.duplicate({ enableReadyCheck: false });
  // Once per outage, not once per reconnection attempt.
  let subscriberDown = false;
  subscriber.on('error', (error: Error) => {
    if (!subscriberDown) log.warn({ err: error }, 'session signals: Redis does not answer; retrying');
    subscriberDown = true;
  });
  subscriber.on('ready', () => {
    if (subscriberDown) log.info('session signals: Redis answers again');
    subscriberDown = false;
  });
  subscriber
    .subscribe(channel)
    .catch((error: unknown) => log.error({ err: error }, 'session signals: cannot subscribe'));
  subscriber.on('message', (from: string, raw: string) => {
    if (from !== channel) return;
    let parsed: ReturnType<typeof sessionSignalSchema.safeParse>;
    try {
      parsed = sessionSignalSchema.safeParse(JSON.parse(raw));
    } catch {
      return log.warn('session signals: a message that is not JSON was ignored');
    }
    if (parsed.success) deliver(parsed.data);
    else log.warn('session signals: a malformed message was ignored');
  });
  return {
    /**
     * Through Redis to every instance. While Redis is away the signal is not queued for its command
     * timeout (a sign-out would wait 5 s): this instance's sockets hear it at once, the other instances'
     * sockets re-check on their own timers. The sign-out itself has happened either way. A signal that no
     * subscriber received is delivered here too.
     */
    async publish(signal) {
      if (redis.status === 'ready') {
        try {
          // Nobody subscribed, not even this instance (its subscriber is reconnecting): tell it here.
          if ((await redis.publish(channel, JSON.stringify(signal))) > 0) return;
        } catch (error) {
          log.error({ err: error, signal }, 'session signals: could not publish');
        }
      }
      queueMicrotask(() => deliver(signal));
    },
    subscribe,
    async close() {
      local.removeAllListeners();
      await closeRedisClient(subscriber);
    },
  };
}
