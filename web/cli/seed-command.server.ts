import type { Command } from 'commander';
import type { EventStore } from '#events/store/event-store.ts';
import { onlyOnce, wholeNumber } from '#infra/cli/arguments.ts';
import { StoppedByDatabase } from '#infra/cli/database-failure.ts';
import { signalName, stopOnInterrupt, type Interruption } from '#infra/cli/interruption.ts';
import { progressBar } from '#infra/cli/progress.ts';
import { isDatabaseUnavailable, type Database } from '#infra/db/database.ts';
import { bootstrapContent } from '#services/bootstrap/bootstrap.ts';
import { createCommandRouter } from '#services/command-router.ts';
import { recordOperation } from '#services/operations/record.ts';
import { seedCompetitors } from '#services/seed/seed-competitors.ts';
import { catchUpProjections, operator, withDatabase } from './cli-context.server.ts';

/** `seed --competitors N`: demo data through the bulk path, then projected. */
export function register(program: Command): void {
  program
    .command('seed')
    .description('append realistic demo competitors (the same events the commands produce)')
    .requiredOption('--competitors <n>', 'how many competitors to add', onlyOnce(wholeNumber(1, 10_000_000)))
    .option('--batch <n>', 'competitors per statement', onlyOnce(wholeNumber(1, 10_000)), 1_000)
    .option('--seed <n>', 'random seed, for a reproducible data set', onlyOnce(wholeNumber(0, 2 ** 32 - 1)))
    .action(async (options: { competitors: number; batch: number; seed?: number }) => {
      // Ctrl-C stops after the batch being written, says how far it got, then ends as Ctrl-C does.
      const interrupt = stopOnInterrupt((signal) =>
        process.stderr.write(
          `\n${signalName(signal)}: stopping after the batch being written (again to quit at once).\n`,
        ),
      );
      const progress: SeedProgress = { phase: 'preparing', stored: 0 };
      try {
        await withDatabase('seed', (db, store) => seed(db, store, options, interrupt, progress));
      } catch (error) {
        const nextStep = afterLostDatabase(progress, options);
        throw nextStep && isDatabaseUnavailable(error) ? new StoppedByDatabase(error, nextStep) : error;
      } finally {
        interrupt.end();
      }
    });
}

/** How far a seed got: what to say if the database goes away. */
interface SeedProgress {
  /** Preparing (nothing added), adding competitors (from `from`, the first position it may take), done adding. */
  phase: 'preparing' | 'adding' | 'added';
  /** Competitors stored for certain: every batch whose commit was answered. */
  stored: number;
  from?: number;
}

const count = (n: number) => n.toLocaleString('en-US');

/**
 * What to do once the database is back, when running seed again as it was would not be right: it adds as
 * many competitors again, it does not resume. Undefined while nothing was added (running it again is).
 */
function afterLostDatabase(
  progress: SeedProgress,
  options: { competitors: number; batch: number },
): string | undefined {
  if (progress.phase === 'preparing') return undefined;
  if (progress.phase === 'added')
    return (
      `start the app, which projects them: all ${count(progress.stored)} competitors were stored ` +
      `(seed again only for more: it adds as many as asked on top of them)`
    );
  const inFlight = Math.min(options.batch, options.competitors - progress.stored);
  return (
    'count what it stored before seeding the rest (seed adds as many as asked again, it does not resume): ' +
    `"npm run cli -- events:export --type CompetitorAdded --from ${progress.from ?? 1} | wc -l" ` +
    `(it stored ${count(progress.stored)} of ${count(options.competitors)} for certain, and perhaps the batch being ` +
    `written: up to ${count(inFlight)} more; competitors the app added meanwhile count too)`
  );
}

async function seed(
  db: Database,
  store: EventStore,
  options: { competitors: number; batch: number; seed?: number },
  interrupt: Interruption,
  progress: SeedProgress,
): Promise<void> {
  await bootstrapContent(store, createCommandRouter(store), { demoData: false });
  const bar = progressBar('adding competitors'.padEnd(28), options.competitors);
  const started = Date.now();
  // Nothing this seed appends is at or before the head: events:export --from it counts what it stored.
  progress.from = (await store.headPosition()) + 1;
  progress.phase = 'adding';
  const added = await seedCompetitors(db.pool, store, {
    count: options.competitors,
    batchSize: options.batch,
    seed: options.seed,
    onProgress: (done) => {
      progress.stored = done;
      bar.update(done);
    },
    signal: interrupt.signal,
  });
  progress.phase = 'added';
  bar.stop();
  // The rest (statistics, projecting) is safe to cut short: one Ctrl-C ends it at once, as by default.
  if (!interrupt.received) interrupt.release();
  // Fresh planner statistics, so reading the log keeps using its commit-order index.
  await db.pool.query('ANALYZE events');
  if (added > 0)
    await recordOperation(store, { type: 'DemoDataSeeded', data: { competitors: added } }, operator);
  const seconds = (Date.now() - started) / 1000;
  if (interrupt.received) {
    console.log(
      `Stopped by ${signalName(interrupt.received)} after ${count(added)} of ${count(options.competitors)} ` +
        `competitors (${seconds.toFixed(1)} s): each batch is stored whole, so the log holds exactly these. ` +
        'The app projects them when it runs; seed again to add more.',
    );
    // Running instances (scaled mode) pick them up at once.
    await store.notifyAppended();
    return;
  }
  console.log(`Appended ${count(added)} competitors in ${seconds.toFixed(1)} s.`);
  await catchUpProjections(db, store);
  console.log('Projections are up to date.');
}
