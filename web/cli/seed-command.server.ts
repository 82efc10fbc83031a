import type { Command } from 'commander';
import { onlyOnce, wholeNumber } from '#infra/cli/arguments.ts';
import { progressBar } from '#infra/cli/progress.ts';
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
    .option('--seed <n>', 'random seed, for a reproducible data set', onlyOnce(wholeNumber(0, 2 ** 31)))
    .action(async (options: { competitors: number; batch: number; seed?: number }) => {
      await withDatabase('seed', async (db, store) => {
        await bootstrapContent(store, createCommandRouter(store), { demoData: false });
        const bar = progressBar('adding competitors'.padEnd(28), options.competitors);
        const started = Date.now();
        const added = await seedCompetitors(db.pool, store, {
          count: options.competitors,
          batchSize: options.batch,
          seed: options.seed,
          onProgress: (done) => bar.update(done),
        });
        bar.stop();
        // Fresh planner statistics, so reading the log keeps using its commit-order index.
        await db.pool.query('ANALYZE events');
        await recordOperation(store, { type: 'DemoDataSeeded', data: { competitors: added } }, operator);
        const seconds = (Date.now() - started) / 1000;
        console.log(`Appended ${added.toLocaleString('en-US')} competitors in ${seconds.toFixed(1)} s.`);
        await catchUpProjections(db, store);
        console.log('Projections are up to date.');
      });
    });
}
