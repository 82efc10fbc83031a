import { EventEmitter } from 'node:events';
import { z } from 'zod';
import type { Logger } from '#infra/logger.ts';
import { closeRedisClient, type Redis } from '#infra/redis.ts';

/**
 * "A session or a user changed": every instance must hear it, because a live socket bound to that
 * session may sit on any of them. Sign-out names the session; a role change, disable or enable names the
 * user. Listeners re-check what they hold against the database, so a signal only says *look again* and
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
  subscriber.on('error', (error: Error) => log.warn({ err: error }, 'session signals redis error'));
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
    async publish(signal) {
      try {
        await redis.publish(channel, JSON.stringify(signal));
      } catch (error) {
        // Sockets still re-check on their own timers; the sign-out itself has happened.
        log.error({ err: error, signal }, 'session signals: could not publish');
      }
    },
    subscribe,
    async close() {
      local.removeAllListeners();
      await closeRedisClient(subscriber);
    },
  };
}
