import type { Command } from 'commander';
import { isoTime, list, onlyOnce, wholeNumber } from '#infra/cli/arguments.ts';
import { multiProgress, type RateBar } from '#infra/cli/progress.ts';
import { allProjections } from '#projections/all-projections.ts';
import { RebuildBusyError } from '#projections/rebuild/rebuild-lease.ts';
import { rebuildProjections, type RebuildSummary } from '#projections/rebuild/rebuild.ts';
import { ProjectionRunner } from '#projections/runner.ts';
import { recordOperation } from '#services/operations/record.ts';
import { log, operator, UsageError, withDatabase } from './cli-context.server.ts';

interface ReplayOptions {
  projection?: string[];
  toPosition?: number;
  toTime?: Date;
  dryRun?: boolean;
  restart?: boolean;
  json?: boolean;
  batchSize: number;
}

/**
 * `all` (the default), one name, or a comma-separated list, collected over repeated flags; a name given
 * twice is chosen once, and `all` among names chooses all (an unknown name beside it is still refused).
 */
export function choose(names: string[] = ['all']): (typeof allProjections)[number][] {
  const unknown = [...new Set(names.filter((n) => n !== 'all' && !allProjections.some((p) => p.name === n)))];
  if (unknown.length > 0) {
    throw new UsageError(
      `--projection: unknown projection "${unknown.join(', ')}"; expected all or one or more (comma-separated) of ${allProjections.map((p) => p.name).join(', ')}.`,
    );
  }
  if (names.includes('all')) return [...allProjections];
  return allProjections.filter((p) => names.includes(p.name));
}

function summaryTable(summaries: RebuildSummary[], dryRun: boolean, wallSeconds: number): string {
  const header = ['projection', 'events', 'rows', 'seconds', ...(dryRun ? ['differing rows'] : [])];
  const lines = summaries.map((s) => [
    s.projection,
    s.events.toLocaleString('en-US'),
    s.rows.toLocaleString('en-US'),
    s.seconds.toFixed(1),
    ...(dryRun ? [String(s.differences ?? 0)] : []),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const row = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [
    row(header),
    ...lines.map(row),
    `${summaries.length} projection(s) in ${wallSeconds.toFixed(1)} s (one read of the log; seconds per projection are its own writing, indexing and swap).`,
  ].join('\n');
}

/** `replay`: blue-green rebuilds of projections in one pass over the log, recorded in the audit log. */
export function register(program: Command): void {
  program
    .command('replay')
    .description(
      'rebuild projections from the event log in one pass (blue-green: shadow tables, indexes once, an atomic swap); resumes an interrupted rebuild',
    )
    // Collected like --type: a repeated flag used to keep only its last value, silently.
    .option('--projection <names>', 'all (default), a projection name, or several comma-separated', list)
    .option(
      '--to-position <n>',
      'with --dry-run: stop after this event position',
      onlyOnce(wholeNumber(0, Number.MAX_SAFE_INTEGER)),
    )
    .option(
      '--to-time <time>',
      'with --dry-run: leave out events accepted after this time (the time the pages show)',
      onlyOnce(isoTime),
    )
    .option('--dry-run', 'build and compare with the live tables, change nothing')
    .option('--restart', 'start over instead of resuming an interrupted rebuild')
    .option('--json', 'print the summary as JSON (no progress bars)')
    .option('--batch-size <n>', 'events read per batch', onlyOnce(wholeNumber(1, 100_000)), 2_000)
    .action(async (options: ReplayOptions) => {
      // A rebuild put live is projected on to the newest event by the live runner at once (or, embedded,
      // at the next start): swapping in a past state only showed old pages and made instances unready.
      if ((options.toPosition !== undefined || options.toTime !== undefined) && !options.dryRun)
        throw new UsageError(
          '--to-position and --to-time need --dry-run: they build a past state to compare with the live tables; a rebuild that is put live always goes to the newest event.',
        );
      const chosen = choose(options.projection);
      await withDatabase('replay', async (db, store) => {
        const runner = new ProjectionRunner({ db, store, projections: chosen, log, batchSize: 2_000 });
        // Bring live up to date first, so a comparison shows real differences rather than lag.
        if (options.toPosition === undefined && options.toTime === undefined)
          for (const projection of chosen) await runner.catchUp(projection);
        const progress = options.json ? undefined : multiProgress();
        const bars = new Map<string, RateBar>();
        const started = performance.now();
        let summaries: RebuildSummary[];
        try {
          summaries = await rebuildProjections(db, store, chosen, {
            toPosition: options.toPosition,
            toTime: options.toTime,
            dryRun: options.dryRun,
            restart: options.restart,
            batchSize: options.batchSize,
            catchUpLive: (projection) => {
              const live = chosen.find((p) => p.name === projection.name);
              return live ? runner.catchUp(live) : Promise.resolve(0);
            },
            onStart: ({ projection, total, done, resumedFrom }) => {
              if (resumedFrom !== undefined)
                process.stderr.write(
                  `Resuming the interrupted rebuild of ${projection} from position ${resumedFrom} (${done} events already applied); --restart starts over.\n`,
                );
              bars.set(projection, progress?.add(projection.padEnd(16), total, done) ?? noBar);
            },
            onProgress: (projection, done) => {
              // Each call follows a commit of the projection's shadow rows and checkpoint.
              log.debug({ projection, done }, 'rebuild batch committed');
              bars.get(projection)?.update(done);
            },
            onPhase: (projection, phase) => bars.get(projection)?.phase(phase),
          });
        } catch (error) {
          progress?.stop();
          if (error instanceof RebuildBusyError) throw new UsageError(error.message);
          throw error;
        }
        for (const [name, bar] of bars) {
          const s = summaries.find((x) => x.projection === name);
          bar.update(s?.events ?? 0, 'done');
        }
        progress?.stop();
        const wallSeconds = (performance.now() - started) / 1000;
        for (const s of summaries) {
          await recordOperation(
            store,
            {
              type: 'ProjectionRebuilt',
              data: {
                projection: s.projection,
                events: s.events,
                rows: s.rows,
                seconds: Math.round(s.seconds * 10) / 10,
                resumed: s.resumedFrom !== null,
                toPosition: options.toPosition ?? null,
                toTime: options.toTime?.toISOString() ?? null,
                dryRun: !!options.dryRun,
                differences: s.differences ?? 0,
              },
            },
            operator,
          );
        }
        // Its records projected at once, as seed's and users:add's changes are: they left every projection
        // behind by them (projections:status said "behind 5" right after a replay) until the app next ran,
        // and running instances (scaled mode) heard of them only at their next poll.
        const everything = new ProjectionRunner({
          db,
          store,
          projections: allProjections,
          log,
          batchSize: 2_000,
        });
        for (const projection of allProjections) await everything.catchUp(projection);
        await store.notifyAppended();
        if (options.json) {
          console.log(
            JSON.stringify({ dryRun: !!options.dryRun, seconds: wallSeconds, projections: summaries }),
          );
          return;
        }
        console.log(summaryTable(summaries, !!options.dryRun, wallSeconds));
        for (const s of summaries)
          console.log(
            options.dryRun
              ? `Dry run: would rebuild ${s.projection} from ${count(s.events, 'event')}; ${count(s.differences ?? 0, 'differing row')}.`
              : // Nothing was compared: a rebuild that swaps in has no differing rows to report.
                `Rebuilt ${s.projection} from ${count(s.events, 'event')}.`,
          );
      });
    });
}

/** "1 event", "2 events". */
const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

const noBar: RateBar = { update: () => undefined, phase: () => undefined, stop: () => undefined };
