import os from 'node:os';
import { eventRegistry } from '#events/all-events.ts';
import { createEventStore, type EventStore } from '#events/store/event-store.ts';
import { progressBar } from '#infra/cli/progress.ts';
import { loadConfig, settingNames } from '#infra/config.ts';
import { lookingLikeWarning, settingsLookingLike } from '#infra/setting-names.ts';
import type { Database } from '#infra/db/database.ts';
import { migrate } from '#infra/db/migrate.ts';
import { openDatabase } from '#infra/db/open-database.ts';
import { createLogger } from '#infra/logger.ts';
import { allProjections } from '#projections/all-projections.ts';
import { ProjectionRunner } from '#projections/runner.ts';

/** A mistake in how a command was called: printed as one line, exit 1. */
export class UsageError extends Error {}

/**
 * Operator commands share the environment's configuration (but not its session secret: they sign no
 * sessions); a bad value stops with one line.
 */
export const config = (() => {
  try {
    return loadConfig(process.env, { forServing: false });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(1);
  }
})();
/**
 * Warnings by default, on standard error: on standard output, a retry warning went into the NDJSON of
 * `events:export > file`. An empty LOG_LEVEL is unset, as for the configuration (pino threw on it).
 */
export const log = createLogger(process.env.LOG_LEVEL ? config.LOG_LEVEL : 'warn', process.stderr);
for (const like of settingsLookingLike(settingNames, process.env))
  process.stderr.write(`Warning: ${lookingLikeWarning(like)}\n`);

/** Operator actions are recorded under the shell user's name. */
export const operator = {
  id: `operator:${os.userInfo().username}`,
  name: `Operator ${os.userInfo().username}`,
};

/** Said when another process holds the migration lock (an upgrade under way), rather than seeming to hang. */
export const migrationWait = {
  onWait: () =>
    process.stderr.write('Another process is migrating the database; waiting for it to finish…\n'),
};

/** Each command opens the database itself (migrating it), does one job, and closes it. */
export async function withDatabase<T>(
  purpose: string,
  work: (db: Database, store: EventStore) => Promise<T>,
): Promise<T> {
  const db = await openDatabase(config, log, { purpose: `the command "${purpose}"`, attempts: 3 });
  try {
    await migrate(db.pool, migrationWait);
    return await work(db, createEventStore(db.pool, eventRegistry));
  } finally {
    await db.close();
  }
}

/** Brings every projection up to date, with a bar, so the result is visible as soon as we return. */
export async function catchUpProjections(db: Database, store: EventStore): Promise<void> {
  const head = await store.headPosition();
  const runner = new ProjectionRunner({ db, store, projections: allProjections, log, batchSize: 2_000 });
  for (const projection of allProjections) {
    const { rows } = await db.pool.query<{ position: number }>(
      'SELECT position FROM projection_checkpoints WHERE projection = $1',
      [projection.name],
    );
    const behind = head - (rows[0]?.position ?? 0);
    if (behind <= 0) continue;
    // A side step of the command: bars on a terminal only, not ten lines in a log.
    const bar = process.stderr.isTTY
      ? progressBar(`projecting ${projection.name}`.padEnd(28), behind)
      : { update: () => undefined, stop: () => undefined };
    let done = 0;
    runner.onCommitted((name, events) => {
      if (name === projection.name) bar.update((done += events.length));
    });
    await runner.catchUp(projection);
    bar.update(behind);
    bar.stop();
  }
  await db.pool.query('ANALYZE');
  // Running instances (scaled mode) pick the new events up at once.
  await store.notifyAppended();
}
