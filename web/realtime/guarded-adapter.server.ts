import type { EventEmitter } from 'node:events';
import type { Namespace } from 'socket.io';
import type { Logger } from '#infra/logger.ts';
import { sampledWarning } from '#infra/sampled-warning.ts';

/** The events through which the Redis adapter hears its channels on the subscriber client. */
const MESSAGE_EVENTS = ['message', 'messageBuffer', 'pmessage', 'pmessageBuffer'] as const;
/** At most one warning per this long, saying how many messages were ignored since the last one. */
const WARN_EVERY_MS = 60_000;

type AdapterFactory<A> = (nsp: Namespace) => A;

/**
 * The Redis adapter with its channel listeners guarded. It reads every message on its pub/sub channels
 * (`<REDIS_PREFIX>socket.io#…`, `…-request#…`, `…-response#…`) in listeners on the subscriber client, with
 * no guard: a message it could not decode (three bytes published by anyone who can reach Redis, or by an
 * instance running another adapter version) threw inside the Redis client's data handler, an uncaught
 * exception that ended every web instance and worker at once; a request that decoded to something else
 * (`null`, rooms that are not a list) rejected with nobody to catch it. Such a message is now dropped,
 * and the log says so (once a minute at most, with how many); every other message is handled as before.
 */
export function guardedAdapter<A>(
  create: AdapterFactory<A>,
  subscriber: EventEmitter,
  log: Logger,
): AdapterFactory<A> {
  const guarded = new WeakSet<(...args: unknown[]) => unknown>();
  const dropped = sampledWarning(
    (report) =>
      log.warn(report, 'live updates: ignored a message on Redis that this instance could not read'),
    WARN_EVERY_MS,
  );
  const guard =
    (listener: (...args: unknown[]) => unknown) =>
    (...args: unknown[]): void => {
      try {
        const result = listener(...args);
        if (result instanceof Promise) result.catch(dropped);
      } catch (error) {
        dropped(error);
      }
    };
  // Called with `new` by Socket.IO (one adapter per namespace): a function, not an arrow, whose returned
  // object `new` yields.
  return function (nsp: Namespace): A {
    const adapter = create(nsp);
    for (const event of MESSAGE_EVENTS) {
      for (const listener of subscriber.listeners(event) as ((...args: unknown[]) => unknown)[]) {
        if (guarded.has(listener)) continue;
        const safe = guard(listener);
        guarded.add(safe);
        subscriber.off(event, listener);
        subscriber.on(event, safe);
      }
    }
    return adapter;
  };
}
