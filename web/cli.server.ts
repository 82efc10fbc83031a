import os from 'node:os';
import { createWriteStream } from 'node:fs';
import { Command, Option } from 'commander';
import { eventRegistry } from '#events/all-events.ts';
import { startOfLog } from '#events/envelope.ts';
import { EventStore } from '#events/store/event-store.ts';
import { email as emailSchema, displayName, roles } from '#events/user/fields.ts';
import { isoTime, oneOf, readPassword, wholeNumber } from '#infra/cli/arguments.ts';
import { progressBar } from '#infra/cli/progress.ts';
import { ConfigError, loadConfig } from '#infra/config.ts';
import type { Database } from '#infra/db/database.ts';
import { migrate } from '#infra/db/migrate.ts';
import { openDatabase } from '#infra/db/open-database.ts';
import { StartupError } from '#infra/errors.ts';
import { createLogger } from '#infra/logger.ts';
import { PASSWORD_MIN_LENGTH } from '#infra/passwords.ts';
import { allProjections } from '#projections/all-projections.ts';
import { diffShadow, rebuildShadow, swapShadow } from '#projections/replay.ts';
import { ProjectionRunner } from '#projections/runner.ts';
import { bootstrapContent } from '#services/bootstrap/bootstrap.ts';
import { createCommandHandler } from '#services/command-handler.ts';
import { recordOperation } from '#services/operations/record.ts';
import { seedCompetitors } from '#services/seed/seed-competitors.ts';
import { createAccount } from '#services/user/accounts.ts';

/** Operator commands. Each opens the database itself, does one job, and closes it. */
const config = (() => {
  try {
    return loadConfig(process.env);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(1);
  }
})();
const log = createLogger(process.env.LOG_LEVEL ?? 'warn');
const operator = { id: `operator:${os.userInfo().username}`, name: `Operator ${os.userInfo().username}` };

async function withDatabase<T>(
  purpose: string,
  work: (db: Database, store: EventStore) => Promise<T>,
): Promise<T> {
  const db = await openDatabase(config, log, { purpose: `the command "${purpose}"`, attempts: 3 });
  try {
    await migrate(db.pool);
    return await work(db, new EventStore(db.pool, eventRegistry));
  } finally {
    await db.close();
  }
}

/** Brings every projection up to date, with a bar, so the result is visible as soon as we return. */
async function catchUpProjections(db: Database, store: EventStore): Promise<void> {
  const head = await store.headPosition();
  const runner = new ProjectionRunner({ db, store, projections: allProjections, log, batchSize: 2_000 });
  for (const projection of allProjections) {
    const { rows } = await db.pool.query<{ position: number }>(
      'SELECT position FROM projection_checkpoints WHERE projection = $1',
      [projection.name],
    );
    const behind = head - (rows[0]?.position ?? 0);
    if (behind <= 0) continue;
    const bar = progressBar(`projecting ${projection.name}`.padEnd(28), behind);
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

const program = new Command('rivals')
  .description('Rivals operator commands')
  .showHelpAfterError()
  .configureOutput({ outputError: (text, write) => write(text) });

program
  .command('migrate')
  .description('apply pending database migrations (running it again applies nothing)')
  .action(async () => {
    const db = await openDatabase(config, log, { purpose: 'the command "migrate"', attempts: 3 });
    try {
      const applied = await migrate(db.pool);
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
  .command('seed')
  .description('append realistic demo competitors (the same events the commands produce)')
  .requiredOption('--competitors <n>', 'how many competitors to add', wholeNumber(1, 10_000_000))
  .option('--batch <n>', 'competitors per statement', wholeNumber(1, 10_000), 1_000)
  .option('--seed <n>', 'random seed, for a reproducible data set', wholeNumber(0, 2 ** 31))
  .action(async (options: { competitors: number; batch: number; seed?: number }) => {
    await withDatabase('seed', async (db, store) => {
      await bootstrapContent(store, createCommandHandler(store), { demoData: false });
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

program
  .command('users:add')
  .description('add a user; the password is read from stdin (--password-stdin) or prompted for')
  .requiredOption('--email <email>', 'sign-in email')
  .requiredOption('--name <name>', 'display name')
  .addOption(
    new Option('--role <role>', 'viewer, editor or admin').argParser(oneOf(roles)).makeOptionMandatory(),
  )
  .option('--password-stdin', 'read the password from standard input')
  .action(
    async (options: {
      email: string;
      name: string;
      role: (typeof roles)[number];
      passwordStdin?: boolean;
    }) => {
      const email = emailSchema.safeParse(options.email);
      if (!email.success) throw new UsageError(`--email: ${email.error.issues[0]?.message}`);
      const name = displayName.safeParse(options.name);
      if (!name.success) throw new UsageError(`--name: ${name.error.issues[0]?.message}`);
      const password = await readPassword('Password: ');
      if (password.length < PASSWORD_MIN_LENGTH)
        throw new UsageError(`The password must be at least ${PASSWORD_MIN_LENGTH} characters.`);
      await withDatabase('users:add', async (db, store) => {
        const handle = createCommandHandler(store);
        const { outcome } = await createAccount(
          db.pool,
          (command) =>
            handle({
              commandId: crypto.randomUUID(),
              correlationId: 'cli',
              actor: operator,
              at: new Date().toISOString(),
              command,
            }),
          { email: email.data, displayName: name.data, role: options.role, password },
        );
        if (outcome?.status !== 'accepted')
          throw new UsageError(outcome?.message ?? 'The user could not be added.');
        await catchUpProjections(db, store);
        console.log(`Added ${name.data} <${email.data}> as ${options.role}.`);
      });
    },
  );

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
      for (const projection of chosen) {
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
          for (const table of projection.tables) await db.pool.query(`DROP TABLE IF EXISTS ${table}__shadow`);
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

program
  .command('projections:status')
  .description('each projection with its checkpoint and how far behind the log it is')
  .action(async () => {
    await withDatabase('projections:status', async (db, store) => {
      const head = await store.headPosition();
      const { rows } = await db.pool.query<{
        projection: string;
        version: number;
        position: number;
        updated_at: Date;
      }>('SELECT projection, version, position, updated_at FROM projection_checkpoints ORDER BY projection');
      const byName = new Map(rows.map((r) => [r.projection, r]));
      console.log(`head position ${head}`);
      for (const p of allProjections) {
        const row = byName.get(p.name);
        const lag = head - (row?.position ?? 0);
        console.log(
          `${p.name.padEnd(20)} v${p.version}  position ${String(row?.position ?? 0).padStart(9)}  behind ${String(Math.max(lag, 0)).padStart(7)}  ${row ? `updated ${row.updated_at.toISOString()}` : 'never run'}${row && row.version !== p.version ? '  (will rebuild: code version changed)' : ''}`,
        );
      }
    });
  });

program
  .command('events:tail')
  .description('the newest events, one per line')
  .option('--limit <n>', 'how many', wholeNumber(1, 10_000), 20)
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
  .description('every event as NDJSON (one JSON object per line), in commit order')
  .option('--out <file>', 'write to a file instead of standard output')
  .action(async (options: { out?: string }) => {
    await withDatabase('events:export', async (_db, store) => {
      const out: NodeJS.WritableStream = options.out ? createWriteStream(options.out) : process.stdout;
      let checkpoint = startOfLog;
      let count = 0;
      for (;;) {
        const events = await store.readAll(checkpoint, 5_000);
        if (events.length === 0) break;
        for (const e of events) {
          if (!out.write(`${JSON.stringify(e)}\n`))
            await new Promise<void>((resolve) => out.once('drain', () => resolve()));
        }
        count += events.length;
        checkpoint = events.at(-1) ?? checkpoint;
      }
      if (options.out) {
        await new Promise<void>((resolve) => out.end(() => resolve()));
        process.stderr.write(`Exported ${count} events to ${options.out}.\n`);
      }
    });
  });

class UsageError extends Error {}

program.parseAsync(process.argv).catch((error: unknown) => {
  if (error instanceof UsageError || error instanceof StartupError || error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(`The command failed: ${(error as Error).message}\n`);
    log.error({ err: error }, 'command failed');
  }
  process.exit(1);
});
