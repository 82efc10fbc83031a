import type { Command } from 'commander';
import { isoTime, wholeNumber } from '#infra/cli/arguments.ts';
import { progressBar } from '#infra/cli/progress.ts';
import { allProjections } from '#projections/all-projections.ts';
import { diffShadow, rebuildShadow, swapShadow } from '#projections/replay.ts';
import { recordOperation } from '#services/operations/record.ts';
import { ProjectionRunner } from '#projections/runner.ts';
import { log, operator, UsageError, withDatabase } from './cli-context.server.ts';

/** `replay`: blue-green rebuilds of projections, recorded in the audit log. */
export function register(program: Command): void {
  program
    .command('replay')
    .description(
      'rebuild one or all projections from the event log (blue-green: shadow tables, then an atomic swap)',
    )
    .option('--projection <name>', 'a projection name, or "all"', 'all')
    .option('--to-position <n>', 'stop after this event position', wholeNumber(0, Number.MAX_SAFE_INTEGER))
    .option('--to-time <time>', 'stop at events recorded after this time', isoTime)
    .option('--dry-run', 'build and compare with the live tables, change nothing')
    .action(async (options: { projection: string; toPosition?: number; toTime?: Date; dryRun?: boolean }) => {
      const chosen =
        options.projection === 'all'
          ? allProjections
          : allProjections.filter((p) => p.name === options.projection);
      if (chosen.length === 0) {
        throw new UsageError(
          `--projection: unknown projection "${options.projection}"; expected all or one of ${allProjections.map((p) => p.name).join(', ')}.`,
        );
      }
      await withDatabase('replay', async (db, store) => {
        const head = await store.headPosition();
        const runner = new ProjectionRunner({ db, store, projections: chosen, log });
        for (const projection of chosen) {
          // Bring live up to date first, so the diff shows real differences rather than lag.
          if (options.toPosition === undefined && options.toTime === undefined)
            await runner.catchUp(projection);
          const bar = progressBar(
            `rebuilding ${projection.name}`.padEnd(28),
            Math.min(head, options.toPosition ?? head) || 1,
          );
          const result = await rebuildShadow(db.pool, store, projection, {
            toPosition: options.toPosition,
            toTime: options.toTime,
            onProgress: (n) => bar.update(n),
          });
          bar.stop();
          const diffs = await diffShadow(db.pool, projection);
          const differences = diffs.reduce((n, d) => n + d.onlyLive + d.onlyShadow, 0);
          for (const d of diffs)
            console.log(`  ${d.table}: ${d.onlyLive} rows only live, ${d.onlyShadow} rows only rebuilt`);
          if (!options.dryRun) await swapShadow(db.pool, projection, result);
          else
            for (const table of projection.tables)
              await db.pool.query(`DROP TABLE IF EXISTS ${table}__shadow`);
          await recordOperation(
            store,
            {
              type: 'ProjectionRebuilt',
              data: {
                projection: projection.name,
                events: result.events,
                toPosition: options.toPosition ?? null,
                toTime: options.toTime?.toISOString() ?? null,
                dryRun: !!options.dryRun,
                differences,
              },
            },
            operator,
          );
          console.log(
            `${options.dryRun ? 'Dry run: would rebuild' : 'Rebuilt'} ${projection.name} from ${result.events} events; ${differences} differing rows.`,
          );
        }
      });
    });
}
