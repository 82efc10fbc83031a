import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { eventRegistry } from '#events/all-events.ts';
import type { CommandBus } from '#events/bus/command-bus.ts';
import { openBus } from '#events/bus/open-bus.ts';
import type { ResultChannel } from '#events/bus/result-channel.ts';
import { CommandInbox } from '#events/store/command-inbox.ts';
import { DeadLetterStore } from '#events/store/dead-letters.ts';
import { createEventStore, type EventStore } from '#events/store/event-store.ts';
import type { Config } from '#infra/config.ts';
import type { Database } from '#infra/db/database.ts';
import type { WriteReport } from '#infra/db/write-report.ts';
import { migrate } from '#infra/db/migrate.ts';
import { openDatabase } from '#infra/db/open-database.ts';
import type { Logger } from '#infra/logger.ts';
import { createMetrics, type Metrics } from '#infra/metrics.ts';
import { Readiness, writeReporter } from '#infra/readiness.ts';
import type { Redis } from '#infra/redis.ts';
import { allProjections } from '#projections/all-projections.ts';
import { ProjectionRunner } from '#projections/runner.ts';
import { ProjectionWatcher } from '#projections/watcher.ts';
import { CommandGateway } from '#services/command-gateway.ts';
import { createCommandRouter, type CommandRouter } from '#services/command-router.ts';
import { StateCache } from '#services/state-cache.ts';
import { startCommandWorker } from '#services/command-worker.ts';
import { startInboxSweeper } from '#services/inbox-sweeper.ts';

/** Everything a process needs, wired once from the configuration and passed in from here on. */
export interface Runtime {
  config: Config;
  log: Logger;
  instanceId: string;
  db: Database;
  store: EventStore;
  inbox: CommandInbox;
  /** What the workers gave up on, until an operator retries or discards it (/ops). */
  deadLetters: DeadLetterStore;
  bus: CommandBus;
  results: ResultChannel;
  /** Decides a command here and now (bootstrap, CLI, tests); requests go through `gateway` and the bus. */
  route: CommandRouter;
  gateway: CommandGateway;
  runner: ProjectionRunner | undefined;
  watcher: ProjectionWatcher;
  redis: Redis | undefined;
  metrics: Metrics;
  readiness: Readiness;
  /** How the writes of one path (`source`) go, for /readyz's "database (writes)" (`writeReporter`). */
  writeReport(source: string): WriteReport;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  /** Shown if the embedded data folder is already in use. */
  purpose: string;
  /** Run the command worker and the projection runner here (default: by ROLE). */
  work?: boolean;
  /** Claim idle bus entries after this long (default 30 s). */
  claimIdleMs?: number;
  /** An already open database (tests); it is left open on close. */
  db?: Database;
  /**
   * Throws when a stop was asked for (a signal during the start): called between the start's steps, so
   * a stop ends the start at the next step, closing what it opened, instead of after the whole of it.
   */
  stopIfAsked?: () => void;
}

export async function startRuntime(config: Config, log: Logger, options: RuntimeOptions): Promise<Runtime> {
  const instanceId = `${os.hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const stopIfAsked = options.stopIfAsked ?? (() => undefined);
  const db = options.db ?? (await openDatabase(config, log, { purpose: options.purpose, stopIfAsked }));
  const closers = closeInReverse(log);
  if (!options.db) closers.push(() => db.close());
  try {
    stopIfAsked();
    await migrateAndLog(db, log, stopIfAsked);
    stopIfAsked();
    const store = createEventStore(db.pool, eventRegistry);
    // One cache of folded aggregate states per process (only the worker decides commands).
    const route = createCommandRouter(store, { cache: new StateCache() });
    const claimIdleMs = options.claimIdleMs ?? config.BUS_CLAIM_IDLE_MS;
    const deadLetters = new DeadLetterStore(db.pool);
    const opened = await openBus(config, log, { instanceId, claimIdleMs, letters: deadLetters });
    closers.push(() => opened.close());
    const { bus, results, redis } = opened;
    const inbox = new CommandInbox(db.pool);
    const readiness = new Readiness();
    const gateway = new CommandGateway({
      ...{ bus, results, store, inbox, log },
      checkStorage: db.checkStorage,
      onWrite: writeReporter(readiness, 'commands'),
    });
    const watcher = new ProjectionWatcher(db);
    await watcher.start();
    closers.push(() => watcher.stop());
    if (db.kind === 'embedded') closers.push(await keepStatisticsFresh(db, log));
    stopIfAsked();
    const runtime: Runtime = {
      ...{ config, log, instanceId, db, store, inbox, deadLetters, bus, results, route, gateway, watcher },
      redis,
      runner: undefined,
      metrics: createMetrics(),
      readiness,
      writeReport: (source) => writeReporter(readiness, source),
      close: closers.close,
    };
    if (options.work ?? config.ROLE !== 'web')
      runtime.runner = await startWork(runtime, closers, claimIdleMs);
    return runtime;
  } catch (error) {
    await closers.close();
    throw error;
  }
}

/** Closers run newest first, each failure logged and the rest still run. */
function closeInReverse(log: Logger) {
  const closers: (() => Promise<unknown>)[] = [];
  return {
    push: (closer: () => Promise<unknown>) => void closers.push(closer),
    close: async () => {
      for (const closeOne of closers.reverse())
        await closeOne().catch((e: unknown) => log.warn({ err: e }, 'close failed'));
    },
  };
}
type Closers = ReturnType<typeof closeInReverse>;

async function migrateAndLog(db: Database, log: Logger, stopIfAsked: () => void): Promise<void> {
  const applied = await migrate(db.pool, {
    stopIfAsked,
    onWait: () => log.info('another process is migrating the database; waiting for it to finish'),
  });
  if (applied.length > 0) log.info({ applied }, 'database migrated');
}

/** PGlite has no autovacuum daemon: keep planner statistics fresh ourselves. Resolves to the stop. */
async function keepStatisticsFresh(db: Database, log: Logger): Promise<() => Promise<void>> {
  const analyze = () =>
    db.pool.query('ANALYZE').catch((e: unknown) => log.warn({ err: e }, 'ANALYZE failed'));
  await analyze();
  const timer = setInterval(() => void analyze(), 15 * 60 * 1000);
  timer.unref();
  return async () => clearInterval(timer);
}

/**
 * The work of a worker process: the projection runner, the command worker and the inbox sweeper, each
 * reporting to readiness and metrics.
 */
async function startWork(runtime: Runtime, closers: Closers, claimIdleMs: number): Promise<ProjectionRunner> {
  const { config, log, db, store, bus, results, route, inbox, readiness, metrics } = runtime;
  const runner = new ProjectionRunner({
    ...{ db, store, projections: allProjections, log },
    writeReport: (projection) => runtime.writeReport(`projection ${projection}`),
  });
  // Read-your-writes in this process hears our own commits at once (others read them after the NOTIFY).
  runner.onCheckpoint((projection, checkpoint) => runtime.watcher.reached(projection, checkpoint));
  await runner.start();
  closers.push(() => runner.stop());
  const worker = startCommandWorker({
    bus,
    results,
    route,
    log,
    consumer: runtime.instanceId,
    inbox,
    checkStorage: db.checkStorage,
    redeliveryMs: claimIdleMs,
    // Our own runner is woken at once; the NOTIFY wakes the runners of other processes.
    onAppended: () => {
      runner.wake();
      return store.notifyAppended();
    },
    onBus: (ok, error) => readiness.report('command bus', ok ? undefined : error),
    onWrite: writeReporter(readiness, 'command worker'),
    onOutcome: (delivery, outcome) =>
      metrics.commands.inc({ type: delivery.envelope.command.type, status: outcome.status }),
  });
  closers.push(() => worker.stop());
  const sweeper = startInboxSweeper({ inbox, bus, log, resendAfterMs: config.INBOX_RESEND_AFTER_MS });
  closers.push(() => sweeper.stop());
  return runner;
}
