import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { eventRegistry } from '#events/all-events.ts';
import type { CommandBus } from '#events/bus/command-bus.ts';
import { MemoryCommandBus } from '#events/bus/memory-command-bus.ts';
import { RedisCommandBus } from '#events/bus/redis-command-bus.ts';
import { MemoryResultChannel, RedisResultChannel, type ResultChannel } from '#events/bus/result-channel.ts';
import { CommandInbox } from '#events/store/command-inbox.ts';
import { createEventStore, type EventStore } from '#events/store/event-store.ts';
import type { Config } from '#infra/config.ts';
import type { Database } from '#infra/db/database.ts';
import { migrate } from '#infra/db/migrate.ts';
import { openDatabase } from '#infra/db/open-database.ts';
import type { Logger } from '#infra/logger.ts';
import { createMetrics, type Metrics } from '#infra/metrics.ts';
import { Readiness } from '#infra/readiness.ts';
import { createRedisClient, type Redis } from '#infra/redis.ts';
import { allProjections } from '#projections/all-projections.ts';
import { ProjectionRunner } from '#projections/runner.ts';
import { ProjectionWatcher } from '#projections/watcher.ts';
import { CommandGateway } from '#services/command-gateway.ts';
import { createCommandRouter, type CommandRouter } from '#services/command-router.ts';
import { StateCache } from '#services/state-cache.ts';
import { startCommandWorker, type Worker } from '#services/command-worker.ts';
import { startInboxSweeper } from '#services/inbox-sweeper.ts';

/** Everything a process needs, wired once from the configuration and passed in from here on. */
export interface Runtime {
  config: Config;
  log: Logger;
  instanceId: string;
  db: Database;
  store: EventStore;
  inbox: CommandInbox;
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
}

export async function startRuntime(config: Config, log: Logger, options: RuntimeOptions): Promise<Runtime> {
  const instanceId = `${os.hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const db = options.db ?? (await openDatabase(config, log, { purpose: options.purpose }));
  const closers: (() => Promise<unknown>)[] = options.db ? [] : [() => db.close()];
  const close = async () => {
    for (const closeOne of closers.reverse())
      await closeOne().catch((e: unknown) => log.warn({ err: e }, 'close failed'));
  };
  try {
    const applied = await migrate(db.pool);
    if (applied.length > 0) log.info({ applied }, 'database migrated');
    const store = createEventStore(db.pool, eventRegistry);
    // One cache of folded aggregate states per process (only the worker decides commands).
    const route = createCommandRouter(store, { cache: new StateCache() });
    const busOptions = { claimIdleMs: options.claimIdleMs, consumerIdleMs: config.BUS_CONSUMER_IDLE_MS };

    let bus: CommandBus;
    let results: ResultChannel;
    let redis: Redis | undefined;
    if (config.REDIS_URL) {
      const url = config.REDIS_URL;
      redis = createRedisClient(url, log, { name: 'commands' });
      const blocking = createRedisClient(url, log, { name: 'bus-reader', blockMs: 2_000 });
      const subscriber = createRedisClient(url, log, { name: 'results', subscriber: true });
      const redisBus = new RedisCommandBus(redis, blocking, config.REDIS_PREFIX, busOptions);
      await redisBus.ensureGroup();
      const channel = new RedisResultChannel(redis, subscriber, config.REDIS_PREFIX, instanceId);
      await channel.whenReady();
      bus = redisBus;
      results = channel;
      const client = redis;
      closers.push(() => client.quit());
    } else {
      bus = new MemoryCommandBus(busOptions);
      results = new MemoryResultChannel();
    }
    closers.push(
      () => bus.close(),
      () => results.close(),
    );

    const inbox = new CommandInbox(db.pool);
    const gateway = new CommandGateway({ bus, results, store, inbox, log });
    const readiness = new Readiness();
    const watcher = new ProjectionWatcher(db);
    await watcher.start();
    closers.push(() => watcher.stop());

    if (db.kind === 'embedded') {
      // PGlite has no autovacuum daemon: keep planner statistics fresh ourselves.
      const analyze = () =>
        db.pool.query('ANALYZE').catch((e: unknown) => log.warn({ err: e }, 'ANALYZE failed'));
      await analyze();
      const timer = setInterval(() => void analyze(), 15 * 60 * 1000);
      timer.unref();
      closers.push(async () => clearInterval(timer));
    }

    const metrics = createMetrics();
    const work = options.work ?? config.ROLE !== 'web';
    let runner: ProjectionRunner | undefined;
    let worker: Worker | undefined;
    if (work) {
      runner = new ProjectionRunner({ db, store, projections: allProjections, log });
      await runner.start();
      const startedRunner = runner;
      closers.push(() => startedRunner.stop());
      worker = startCommandWorker({
        bus,
        results,
        route,
        log,
        consumer: instanceId,
        inbox,
        onAppended: () => store.notifyAppended(),
        onBus: (ok, error) => readiness.report('command bus', ok ? undefined : error),
        onDatabase: (ok, error) => readiness.report('database (commands)', ok ? undefined : error),
        onOutcome: (delivery, outcome) =>
          metrics.commands.inc({ type: delivery.envelope.command.type, status: outcome.status }),
      });
      const startedWorker = worker;
      closers.push(() => startedWorker.stop());
      const sweeper = startInboxSweeper({ inbox, bus, log, resendAfterMs: config.INBOX_RESEND_AFTER_MS });
      closers.push(() => sweeper.stop());
    }
    return {
      config,
      log,
      instanceId,
      db,
      store,
      inbox,
      bus,
      results,
      route,
      gateway,
      runner,
      watcher,
      redis,
      metrics,
      readiness,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
