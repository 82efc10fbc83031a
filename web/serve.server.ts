import { loadConfig, settingNames, type Config } from '#infra/config.ts';
import { lookingLikeWarning, settingsLookingLike } from '#infra/setting-names.ts';
import { startInstanceHeartbeat } from '#infra/instances.ts';
import { createLogger, type Logger } from '#infra/logger.ts';
import { createSessionSignals } from './auth/session-signals.server.ts';
import { installCrashPolicy } from './crash-policy.server.ts';
import { closeParts, StopRequested, type ProcessParts } from './process-parts.server.ts';
import { createRealtime } from './realtime/realtime.server.ts';
import { startAuditFeed } from './realtime/audit-feed.server.ts';
import { startChangeFeed } from './realtime/change-feed.server.ts';
import { startUserFeed } from './realtime/user-feed.server.ts';
import { startRuntime, type Runtime } from './runtime.server.ts';
import { startWeb } from './start-web.server.ts';
import { startWorkerHealth } from './worker-health.server.ts';
import { startFailureLine } from './start-failure.ts';

const SHUTDOWN_DEADLINE_MS = 10_000;

/**
 * Tells the supervisor (npm start), when there is one and it is still there, that this process is up.
 * Sending to a supervisor gone meanwhile throws (ERR_IPC_CHANNEL_CLOSED); its going is a stop already.
 */
const ready = () => {
  if (process.connected) process.send?.('ready');
};

/**
 * Starts the server or worker; returns what stops it, which `main.server.ts` calls on a stop signal or
 * when the supervisor is gone (its handlers, installed before this module loaded, are the process's only
 * ones for SIGINT/SIGTERM/SIGHUP and 'disconnect').
 */
export function serve(): (reason: string) => void {
  // Replaced before `main` first waits, so before any signal can come (a bad configuration excepted).
  let stop: (reason: string) => void = () => process.exit(0);
  main((shutdown) => (stop = shutdown)).catch(failed);
  return (reason) => stop(reason);
}

async function main(onStop: (shutdown: (reason: string) => void) => void): Promise<void> {
  const config = loadConfig(process.env);
  const log = createLogger(config.LOG_LEVEL);
  for (const like of settingsLookingLike(settingNames, process.env))
    log.warn({ variable: like.name, meant: like.meant }, lookingLikeWarning(like));
  const parts: ProcessParts = { stopFeeds: [] };
  let stopping = false;
  let starting: Promise<void> = Promise.resolve();
  let started = false;

  const shutdown = async (signal: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    if (!started) {
      // A start under way goes on to the end of its current step (opening or creating the database,
      // a migration, the first start's content: a write is never cut in half) and stops there. That step
      // may take longer than the deadline (creating the embedded database takes seconds, more on a busy
      // machine): the deadline is for the closing, from when that step is done (counted from the signal, a
      // stop early in a first start ended with "shutdown took too long" and exit code 1).
      log.info('stopping once the start step under way is done (it is not cut in half)');
      await starting.catch(() => undefined);
    }
    const deadline = setTimeout(() => {
      log.error('shutdown took too long; exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS);
    deadline.unref();
    await closeParts(parts);
    clearTimeout(deadline);
    process.exit(exitCode);
  };
  // A stop signal (SIGHUP: the terminal `npm start` runs in was closed; without a handler Node dies
  // mid-write), or the supervisor gone (its IPC channel closed): main.server.ts hears both.
  onStop((reason) => void shutdown(reason));
  installCrashPolicy(log, (reason) => shutdown(reason, 1));

  const stopIfAsked = () => {
    if (stopping) throw new StopRequested();
  };
  starting = start(config, log, parts, stopIfAsked);
  try {
    await starting;
    started = true;
  } catch (error) {
    if (error instanceof StopRequested) return;
    // A stop was asked for meanwhile: the shutdown closes what the start opened and ends the process;
    // closing here too would close everything twice, and the exit code would be whichever ran last.
    if (stopping) {
      log.warn({ err: error }, 'the start failed while stopping');
      return;
    }
    // A failed start lets go of what it opened (the data folder's lock with it) before it says why.
    stopping = true;
    await closeParts(parts).catch(() => undefined);
    throw error;
  }
}

async function start(
  config: Config,
  log: Logger,
  parts: ProcessParts,
  stopIfAsked: () => void,
): Promise<void> {
  const runtime: Runtime = (parts.runtime = await startRuntime(config, log, {
    purpose: `server on port ${config.PORT}`,
    claimIdleMs: config.BUS_CLAIM_IDLE_MS,
    stopIfAsked,
  }));
  stopIfAsked();
  const signals = (parts.signals = createSessionSignals({
    redis: runtime.redis,
    prefix: config.REDIS_PREFIX,
    log,
  }));
  // Every instance says which shared settings it runs with, and hears of those that differ (/ops).
  const registerInstance = (sessionSecret?: string) => {
    parts.heartbeat = startInstanceHeartbeat({
      db: runtime.db.pool,
      instanceId: runtime.instanceId,
      settings: {
        role: config.ROLE,
        sessionSecret,
        redisPrefix: runtime.redis ? config.REDIS_PREFIX : undefined,
      },
      log,
      onCheck: (disagreements) => runtime.metrics.reportDisagreements(disagreements),
      onWrite: runtime.writeReport('instances'),
    });
  };

  if (config.ROLE !== 'worker') {
    await startWeb(config, runtime, parts, { signals, stopIfAsked, registerInstance });
    // Under the supervisor (npm start): this child is up, so a later exit is a crash worth a restart.
    ready();
  } else {
    registerInstance();
    // A worker has no HTTP server, but it projects: it broadcasts through the Redis adapter.
    if (runtime.redis)
      parts.realtime = createRealtime({ redis: runtime.redis, prefix: config.REDIS_PREFIX, log });
    // Under the supervisor (npm start): the worker works now, so a later death is a crash to restart.
    ready();
    // Health is for supervisors; a worker whose port is taken still works, and says so.
    parts.server = await startWorkerHealth(runtime, runtime.metrics).catch((error: unknown) => {
      log.warn({ port: config.PORT, reason: (error as Error).message }, 'worker health endpoint not started');
      return undefined;
    });
    log.info(
      { role: config.ROLE, port: config.PORT },
      parts.server ? 'worker started; health on /healthz and /readyz' : 'worker started; no health endpoint',
    );
  }
  if (runtime.runner && parts.realtime) {
    parts.stopFeeds.push(startChangeFeed(runtime.runner, parts.realtime, { db: runtime.db.pool, log }));
    parts.stopFeeds.push(startAuditFeed(runtime.runner, parts.realtime));
  }
  if (runtime.runner) parts.stopFeeds.push(startUserFeed(runtime.runner, signals));
}

function failed(error: unknown): never {
  const line = startFailureLine(error, process.env);
  if (line) {
    process.stderr.write(`${line}\n`);
  } else {
    process.stderr.write(`Rivals could not start: ${(error as Error).message}\n`);
    console.error(error);
  }
  process.exit(1);
}
