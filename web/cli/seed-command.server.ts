import type { Command } from 'commander';
import type { EventStore } from '#events/store/event-store.ts';
import { onlyOnce, wholeNumber } from '#infra/cli/arguments.ts';
import { signalName, stopOnInterrupt, type Interruption } from '#infra/cli/interruption.ts';
import { progressBar } from '#infra/cli/progress.ts';
import type { Database } from '#infra/db/database.ts';
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
      try {
        await withDatabase('seed', (db, store) => seed(db, store, options, interrupt));
      } finally {
        interrupt.end();
      }
    });
}

async function seed(
  db: Database,
  store: EventStore,
  options: { competitors: number; batch: number; seed?: number },
  interrupt: Interruption,
): Promise<void> {
  await bootstrapContent(store, createCommandRouter(store), { demoData: false });
  const bar = progressBar('adding competitors'.padEnd(28), options.competitors);
  const started = Date.now();
  const added = await seedCompetitors(db.pool, store, {
    count: options.competitors,
    batchSize: options.batch,
    seed: options.seed,
    onProgress: (done) => bar.update(done),
    signal: interrupt.signal,
  });
  bar.stop();
  // The rest (statistics, projecting) is safe to cut short: one Ctrl-C ends it at once, as by default.
  if (!interrupt.received) interrupt.release();
  // Fresh planner statistics, so reading the log keeps using its commit-order index.
  await db.pool.query('ANALYZE events');
  if (added > 0)
    await recordOperation(store, { type: 'DemoDataSeeded', data: { competitors: added } }, operator);
  const seconds = (Date.now() - started) / 1000;
  const count = (n: number) => n.toLocaleString('en-US');
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
