import type { Logger } from '#infra/logger.ts';

/**
 * What happens to an error nothing caught (docs/decisions/0007-crash-policy.md). Every boundary —
 * Koa's error middleware, the socket handshake, reactors, timers — catches and answers, so reaching
 * here means a bug whose effects we cannot know (a half-done write, a leaked lock, a wedged loop).
 * Serving on in that state is not safe: log it as fatal, shut down cleanly within the deadline, and
 * exit non-zero so the supervisor (`npm start`) or the orchestrator starts a fresh process.
 */
export function installCrashPolicy(log: Logger, shutdown: (reason: string) => Promise<void>): void {
  let crashing = false;
  const crash = (kind: 'unhandledRejection' | 'uncaughtException') => (error: unknown) => {
    log.fatal({ err: error, kind }, 'unexpected error; restarting the process');
    if (crashing) return;
    crashing = true;
    shutdown(kind).catch(() => process.exit(1));
  };
  process.on('unhandledRejection', crash('unhandledRejection'));
  process.on('uncaughtException', crash('uncaughtException'));
}
