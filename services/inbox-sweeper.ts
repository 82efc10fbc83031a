import type { CommandBus } from '#events/bus/command-bus.ts';
import type { CommandInbox } from '#events/store/command-inbox.ts';
import type { Logger } from '#infra/logger.ts';

export interface SweeperOptions {
  inbox: CommandInbox;
  bus: CommandBus;
  log: Logger;
  /** A command still in the inbox this long after it was admitted (or last re-sent) is sent again. */
  resendAfterMs: number;
  /** How often to look (default: a fifth of `resendAfterMs`, at least 200 ms). */
  everyMs?: number;
}

/**
 * Puts back on the bus the accepted commands that the bus seems to have lost (Redis restarted without
 * persistence, the in-process bus died with its process, the send failed). A command that was only slow
 * is delivered twice, which its idempotent handling absorbs. Runs in every worker; the inbox hands each
 * stale command to one of them per round.
 */
export function startInboxSweeper(options: SweeperOptions): { stop(): Promise<void> } {
  const { inbox, bus, log, resendAfterMs } = options;
  const everyMs = options.everyMs ?? Math.max(200, Math.floor(resendAfterMs / 5));
  let failing = false;
  let running = true;
  let current: Promise<void> = Promise.resolve();

  const sweep = async () => {
    try {
      for (;;) {
        const stale = await inbox.takeStale(resendAfterMs, 100);
        for (const envelope of stale) await bus.send(envelope);
        if (stale.length > 0)
          log.info({ count: stale.length }, 're-sent accepted commands the bus had not delivered');
        if (stale.length < 100 || !running) break;
      }
      if (failing) log.info('inbox sweeper working again');
      failing = false;
    } catch (error) {
      if (!failing)
        log.warn({ err: error }, 'inbox sweeper cannot reach the database or the bus; will retry');
      failing = true;
    }
  };

  const timer = setInterval(() => {
    current = current.then(sweep);
  }, everyMs);
  timer.unref();
  return {
    async stop() {
      running = false;
      clearInterval(timer);
      await current;
    },
  };
}
