import type { Command } from 'commander';
import { eventRegistry } from '#events/all-events.ts';
import { exportEvents, type LogFilter } from '#events/store/export-log.ts';
import { verifyLog } from '#events/store/verify-log.ts';
import { list, nonEmpty, onlyOnce, positionOrTime, wholeNumber } from '#infra/cli/arguments.ts';
import { OutputFileError, writeLinesAtomically, writeLinesToStdout } from '#infra/cli/output-file.ts';
import { migrate } from '#infra/db/migrate.ts';
import { openDatabase } from '#infra/db/open-database.ts';
import { config, log, migrationWait, UsageError, withDatabase } from './cli-context.server.ts';
import { projectionsStatusLines } from './projections-status.server.ts';

/** `migrate`, `projections:status`, `events:tail`, `events:export`: looking at the database and its log. */
export function register(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations (running it again applies nothing)')
    .action(async () => {
      const db = await openDatabase(config, log, { purpose: 'the command "migrate"', attempts: 3 });
      try {
        const applied = await migrate(db.pool, migrationWait);
        console.log(
          applied.length
            ? `Applied ${applied.join(', ')} to ${db.describe}.`
            : `Nothing to apply; ${db.describe} is up to date.`,
        );
      } finally {
        await db.close();
      }
    });

  program
    .command('projections:status')
    .description('each projection with its checkpoint and how far behind the log it is')
    .action(async () => {
      await withDatabase('projections:status', async (db, store) => {
        for (const line of await projectionsStatusLines(db, store, config.READY_MAX_LAG_SECONDS))
          console.log(line);
      });
    });

  program
    .command('events:tail')
    .description('the newest events, one per line')
    .option('--limit <n>', 'how many', onlyOnce(wholeNumber(1, 10_000)), 20)
    .action(async (options: { limit: number }) => {
      await withDatabase('events:tail', async (db) => {
        const { rows } = await db.pool.query<{
          position: number;
          stream: string;
          type: string;
          recorded_at: Date;
          actor: string;
        }>(
          `SELECT position, stream, type, recorded_at, metadata->'actor'->>'name' AS actor FROM events ORDER BY position DESC LIMIT $1`,
          [options.limit],
        );
        for (const r of rows.reverse())
          console.log(`${r.position}\t${r.recorded_at.toISOString()}\t${r.type}\t${r.stream}\t${r.actor}`);
      });
    });

  program
    .command('events:export')
    .description('events as NDJSON (one JSON object per line), in commit order; all of them unless filtered')
    .option(
      '--out <file>',
      'write to a file instead of standard output (- is standard output)',
      onlyOnce(nonEmpty('a file path')),
    )
    .option(
      '--from <position|time>',
      'from this event position, or events recorded at or after this time',
      onlyOnce(positionOrTime),
    )
    .option(
      '--to <position|time>',
      'up to this event position, or events recorded at or before this time',
      onlyOnce(positionOrTime),
    )
    .option('--type <types>', 'only these event types (comma-separated or repeated)', list)
    .option('--stream <stream>', 'only this stream', onlyOnce(nonEmpty('a stream name')))
    .action(async (options: { out?: string; type?: string[] } & Omit<LogFilter, 'types'>) => {
      const filter = exportFilter(options);
      // `--out -` is standard output, as for most tools; it wrote a file named "-" in the current folder.
      const out = options.out === '-' ? undefined : options.out;
      await withDatabase('events:export', async (db) => {
        let count = 0;
        async function* lines() {
          for await (const event of exportEvents(db.pool, eventRegistry, filter)) {
            count++;
            yield `${JSON.stringify(event)}\n`;
          }
        }
        if (out) {
          await writeLinesAtomically(out, lines()).catch((error: unknown) => {
            throw error instanceof OutputFileError ? new UsageError(`--out: ${error.message}`) : error;
          });
        } else if (!(await writeLinesToStdout(lines()))) return;
        process.stderr.write(`Exported ${count} event${count === 1 ? '' : 's'}${out ? ` to ${out}` : ''}.\n`);
      });
    });

  program
    .command('events:verify')
    .description(
      'check the log: stream versions contiguous from 1, commit order, every event parses after upcasting, every outcome names existing events',
    )
    .option(
      '--limit <n>',
      'report at most this many problems of each kind',
      onlyOnce(wholeNumber(1, 10_000)),
      20,
    )
    .action(async (options: { limit: number }) => {
      await withDatabase('events:verify', async (db) => {
        const started = performance.now();
        const result = await verifyLog(db.pool, eventRegistry, { limit: options.limit });
        const seconds = ((performance.now() - started) / 1000).toFixed(1);
        const checked = `${result.events} events in ${result.streams} streams and ${result.outcomes} command outcomes`;
        if (result.problems.length === 0) {
          console.log(`The log is consistent: checked ${checked} in ${seconds} s.`);
          return;
        }
        console.log(`Found problems in the log (checked ${checked}; first ${options.limit} of each kind):`);
        for (const p of result.problems) console.log(`  [${p.kind}] ${p.message}`);
        process.exitCode = 1;
      });
    });
}

/** The export's filter, refused with the flag's name when it cannot match anything by construction. */
function exportFilter(options: { type?: string[] } & Omit<LogFilter, 'types'>): LogFilter {
  const unknown = (options.type ?? []).filter((type) => !eventRegistry.knows(type));
  if (unknown.length > 0)
    throw new UsageError(
      `--type: unknown event type ${unknown.join(', ')}; known types: ${eventRegistry.types().join(', ')}.`,
    );
  const { from, to } = options;
  const reversed =
    from && to
      ? 'position' in from && 'position' in to
        ? from.position > to.position
        : 'time' in from && 'time' in to && from.time > to.time
      : false;
  if (reversed) throw new UsageError('--from is after --to: no event can match; swap them.');
  return { from, to, types: options.type, stream: options.stream };
}

/**
 * What the version a projection was built with means to this code: an older one is rebuilt (blue-green);
 * a newer one, during a rolling upgrade, is left to the newer instances (never rebuilt back), which
 * "will rebuild" said it would be.
 */
