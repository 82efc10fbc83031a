import { spawn, type StdioOptions } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { access, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import pg from 'pg';
import { databaseBackends, runs } from '#tests/support/environment.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';
import { until } from '#tests/support/until.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const command = [process.execPath, '--import', 'tsx', 'web/cli.server.ts'];

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Whether it had to be killed: it hung. */
  hung: boolean;
}

interface RunOptions {
  stdin?: string;
  /**
   * What reads standard output: everything (the default), nobody (closed at once, as `| true`), one line
   * and then nobody (`| head -n 1`), or a file descriptor (`> /dev/full`).
   */
  stdout?: 'read' | 'closed' | 'first-line' | number;
}

/** Runs one operator command with exactly `env`, as `npm run cli -- …` does; kills it after 90 s. */
function run(env: Record<string, string>, args: string[], options: RunOptions = {}): Promise<Ran> {
  const { stdout = 'read' } = options;
  const stdio: StdioOptions = ['pipe', typeof stdout === 'number' ? stdout : 'pipe', 'pipe'];
  return new Promise((resolve) => {
    const child = spawn(command[0] as string, [...command.slice(1), ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio,
    });
    let out = '';
    let err = '';
    if (stdout === 'closed') child.stdout?.destroy();
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (stdout === 'first-line' && out.includes('\n')) {
        out = out.slice(0, out.indexOf('\n') + 1);
        child.stdout?.destroy();
      }
    });
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    let hung = false;
    const timer = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, 90_000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: out, stderr: err, hung });
    });
    child.stdin?.end(options.stdin ?? '');
  });
}

/**
 * Runs one operator command on a terminal, as an operator's shell does (`script`, util-linux, in every
 * Debian), typing `keys` 2 s after it starts; resolves with what the terminal showed and the exit code.
 */
function onTerminal(env: Record<string, string>, args: string[], keys: string) {
  const words = [
    'env',
    '-i',
    `PATH=${process.env.PATH ?? ''}`,
    ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
  ];
  const shell = [...words, ...command, ...args].map((word) => `'${word.replaceAll("'", `'\\''`)}'`).join(' ');
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn('script', ['-qec', shell, '/dev/null'], { cwd: root });
    let output = '';
    const typing = setTimeout(() => child.stdin.write(keys), 2_000);
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.on('exit', (code) => {
      clearTimeout(typing);
      clearTimeout(timer);
      resolve({ code, output: output.replace(/\r/g, '') });
    });
  });
}

/** One line on standard error, nothing else: no stack trace, no log object, no help text before it. */
function expectOneLine(ran: Ran, what: string): string {
  expect(ran.hung, what).toBe(false);
  expect(ran.stderr, what).not.toMatch(/\n\s+at |node:internal|"stack"|Unhandled 'error'/);
  return ran.stderr.split('\n')[0] ?? '';
}

const TIME_ZONE =
  'A time of day needs its time zone: add Z for UTC or an offset such as +01:00 (2026-11-21T10:00:00Z).';

/**
 * The operator commands' whole input space as a careless operator or a script sends it: flags given
 * twice, times without a zone or outside the years the database keeps, `--out -`, a reader that stops
 * reading, a full disk as standard output, odd environment variables, Ctrl-C at the password prompt and
 * during long commands. Each CLI process opens (and migrates) its own database: slow on two busy cores.
 */
describe.each(databaseBackends)('operator commands, input space on %s', { timeout: 240_000 }, (backend) => {
  let env: Record<string, string>;
  let dir: string;
  let db: TestDatabase | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rivals-cli-input-'));
    if (backend === 'postgres') {
      db = await createTestDatabase('postgres');
      env = { DATABASE_URL: db.url ?? '', LOG_LEVEL: 'warn' };
    } else {
      env = { DATA_DIR: path.join(dir, 'data'), LOG_LEVEL: 'warn' };
    }
    const seeded = await run(env, ['seed', '--competitors', '30', '--seed', '3']);
    expect(seeded.code, seeded.stderr).toBe(0);
  }, 240_000);
  afterAll(async () => {
    await db?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  /** How many events of `type` the log holds, by the export itself. */
  async function exported(type: string): Promise<number> {
    const result = await run(env, ['events:export', '--type', type]);
    expect(result.code, result.stderr).toBe(0);
    return result.stdout.split('\n').filter(Boolean).length;
  }

  it('a reader that stops reading (`| true`, `| head -n 1`) ends every command quietly and promptly, its work done', async () => {
    const cases: [string[], RunOptions['stdout']][] = [
      [['events:tail', '--limit', '10000'], 'closed'],
      [['events:tail', '--limit', '10000'], 'first-line'],
      [['events:export'], 'closed'],
      [['events:export'], 'first-line'],
      [['events:verify'], 'closed'],
      [['projections:status'], 'closed'],
      [['migrate'], 'closed'],
      [['replay', '--projection', 'audit-log', '--dry-run'], 'closed'],
      [['replay', '--projection', 'user-list', '--json'], 'closed'],
      [['seed', '--competitors', '4', '--seed', '9'], 'closed'],
    ];
    for (const [args, stdout] of cases) {
      const what = `${args.join(' ')} (stdout ${String(stdout)})`;
      const started = performance.now();
      const ran = await run(env, args, { stdout });
      expectOneLine(ran, what);
      expect(ran.stderr, what).not.toContain('EPIPE');
      expect(ran.stderr, what).not.toContain('The command failed');
      expect(ran.code, `${what}: ${ran.stderr}`).toBe(0);
      expect(performance.now() - started, what).toBeLessThan(60_000);
    }
    // The seed whose reader left still projected what it added (it stopped at its first line before).
    const status = await run(env, ['projections:status']);
    expect(status.stdout).toMatch(/competitor-list\s+v\d+\s+position\s+\d+\s+behind\s+[01]\b/);
  });

  it('a flag given twice with different values is refused naming it, before anything is done; the same value twice is one', async () => {
    const users = await exported('UserAdded');
    const rebuilt = await exported('ProjectionRebuilt');
    const cases: [string[], string][] = [
      [
        ['users:add', '--email', 'twice@example.test', '--name', 'T', '--role', 'viewer', '--role', 'admin'],
        `error: option '--role <role>' argument 'admin' is invalid. It was already given as "viewer"; give it once.`,
      ],
      [
        [
          'users:add',
          '--email=a@example.test',
          '--email',
          'b@example.test',
          '--name',
          'T',
          '--role',
          'viewer',
        ],
        `error: option '--email <email>' argument 'b@example.test' is invalid. It was already given as "a@example.test"; give it once.`,
      ],
      [
        ['users:add', '--email', 'a@example.test', '--name', 'A', '--name=B', '--role', 'viewer'],
        `error: option '--name <name>' argument 'B' is invalid. It was already given as "A"; give it once.`,
      ],
      [
        ['events:export', '--stream', 'segments', '--stream', 'operations'],
        `error: option '--stream <stream>' argument 'operations' is invalid. It was already given as "segments"; give it once.`,
      ],
      [
        ['events:export', '--from=5', '--from', '7'],
        `error: option '--from <position|time>' argument '7' is invalid. It was already given as "5"; give it once.`,
      ],
      [
        ['events:export', '--out', path.join(dir, 'a.ndjson'), '--out', path.join(dir, 'b.ndjson')],
        `error: option '--out <file>' argument '${path.join(dir, 'b.ndjson')}' is invalid. It was already given as "${path.join(dir, 'a.ndjson')}"; give it once.`,
      ],
      [
        ['events:tail', '--limit=5', '--limit', '7'],
        `error: option '--limit <n>' argument '7' is invalid. It was already given as "5"; give it once.`,
      ],
      [
        ['replay', '--to-position', '5', '--to-position', '10', '--dry-run'],
        `error: option '--to-position <n>' argument '10' is invalid. It was already given as "5"; give it once.`,
      ],
      [
        ['seed', '--competitors', '1', '--competitors', '1000'],
        `error: option '--competitors <n>' argument '1000' is invalid. It was already given as "1"; give it once.`,
      ],
    ];
    for (const [args, message] of cases) {
      const ran = await run(env, args, { stdin: 'a-long-password-123\n' });
      expect(expectOneLine(ran, args.join(' ')), args.join(' ')).toBe(message);
      expect(ran.code, args.join(' ')).toBe(1);
      expect(ran.stdout, args.join(' ')).toBe('');
    }
    expect(await exported('UserAdded')).toBe(users);
    expect(await exported('ProjectionRebuilt')).toBe(rebuilt);
    await expect(readdir(dir)).resolves.not.toContain('a.ndjson');
    const same = await run(env, ['events:tail', '--limit', '2', '--limit=2']);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stdout.split('\n').filter(Boolean)).toHaveLength(2);
  });

  it('a time of day without a zone, or a year the database does not keep, is refused naming the flag before anything is read', async () => {
    const rebuilt = await exported('ProjectionRebuilt');
    const time = 'Expected a date-time such as 2026-11-21T10:00:00Z.';
    const positionOrTime = `Expected an event position (a whole number) or a date-time such as 2026-11-21T10:00:00Z.`;
    const cases: [string[], string][] = [
      [
        ['events:export', '--from', '2026-11-21T10:00:00'],
        `error: option '--from <position|time>' argument '2026-11-21T10:00:00' is invalid. ${TIME_ZONE}`,
      ],
      [
        ['events:export', '--to', '2026-11-21 10:00'],
        `error: option '--to <position|time>' argument '2026-11-21 10:00' is invalid. ${TIME_ZONE}`,
      ],
      [
        ['replay', '--to-time', '2026-11-21T10:00:00.5', '--dry-run'],
        `error: option '--to-time <time>' argument '2026-11-21T10:00:00.5' is invalid. ${TIME_ZONE}`,
      ],
      [
        ['events:export', '--from', '0000-01-01'],
        `error: option '--from <position|time>' argument '0000-01-01' is invalid. ${positionOrTime}`,
      ],
      [
        ['replay', '--to-time', '0000-06-01T00:00:00Z', '--dry-run'],
        `error: option '--to-time <time>' argument '0000-06-01T00:00:00Z' is invalid. ${time}`,
      ],
      [
        ['replay', '--to-time', '9999-12-31T23:00:00-14:00', '--dry-run'],
        `error: option '--to-time <time>' argument '9999-12-31T23:00:00-14:00' is invalid. ${time}`,
      ],
      [
        ['events:export', '--to', '2026-11-21T10:00:00+25:00'],
        `error: option '--to <position|time>' argument '2026-11-21T10:00:00+25:00' is invalid. ${positionOrTime}`,
      ],
    ];
    for (const [args, message] of cases) {
      const ran = await run(env, args);
      expect(expectOneLine(ran, args.join(' ')), args.join(' ')).toBe(message);
      expect(ran.code, args.join(' ')).toBe(1);
      expect(ran.stdout, args.join(' ')).toBe('');
    }
    expect(await exported('ProjectionRebuilt')).toBe(rebuilt);
    // With its zone, the same time is taken, in any of the ISO forms; year 1 and year 9999 are years.
    for (const value of [
      '2026-11-21T10:00:00Z',
      '2026-11-21T10:00:00z',
      '2026-11-21T11:00:00+01:00',
      '2026-11-21T05:00-0500',
      '0001-01-01',
      '9999-12-31T23:59:59Z',
    ]) {
      const ran = await run(env, ['events:export', '--to', value]);
      expect(ran.code, `${value}: ${ran.stderr}`).toBe(0);
    }
  });

  it('a fraction of a second after a comma, as ISO 8601 allows, bounds the export as after a full stop', async () => {
    // It was read as a time with no zone: "A time of day needs its time zone: add Z…" for a time ending in Z.
    const now = new Date();
    const comma = now.toISOString().replace('.', ',');
    for (const flag of ['--from', '--to']) {
      const withComma = await run(env, ['events:export', flag, comma]);
      const withStop = await run(env, ['events:export', flag, now.toISOString()]);
      expect(withComma.code, `${flag} ${comma}: ${withComma.stderr}`).toBe(0);
      expect(withComma.stdout, `${flag} ${comma}`).toBe(withStop.stdout);
      expect(withComma.stderr).toBe(withStop.stderr);
    }
    const toAll = await run(env, ['events:export', '--to', '2026-01-01T00:00:00,5Z']);
    expect(toAll.code, toAll.stderr).toBe(0);
  });

  it('--out - is standard output, not a file named "-" in the current folder', async () => {
    const dash = path.join(root, '-');
    try {
      const ran = await run(env, ['events:export', '--out', '-', '--type', 'SegmentAdded']);
      expect(ran.code, ran.stderr).toBe(0);
      const lines = ran.stdout.split('\n').filter(Boolean);
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.every((l) => (JSON.parse(l) as { type: string }).type === 'SegmentAdded')).toBe(true);
      expect(ran.stderr).toBe(`Exported ${lines.length} events.\n`);
      await expect(access(dash)).rejects.toThrow();
    } finally {
      await rm(dash, { force: true });
    }
  });

  // /dev/full exists on Linux, where Rivals and CI run: no skip, a missing device fails loudly.
  it('users:add and users:set-password without --password-stdin and no terminal refuse in one line naming the flag, reading nothing', async () => {
    const users = await exported('UserAdded');
    const resets = await exported('UserPasswordReset');
    for (const args of [
      ['users:add', '--email', 'piped@example.test', '--name', 'Piped', '--role', 'viewer'],
      ['users:set-password', '--email', 'piped@example.test'],
    ]) {
      // A script that pipes the password in but forgot the flag: it was read as if the flag were given.
      const ran = await run(env, args, { stdin: 'a-long-password-123\n' });
      expect(expectOneLine(ran, args[0] ?? '')).toBe(
        'There is no terminal to ask for the password: pipe it in with --password-stdin.',
      );
      expect(ran.stderr.trim().split('\n')).toHaveLength(1);
      expect(ran.code).toBe(1);
      expect(ran.stdout).toBe('');
    }
    expect(await exported('UserAdded')).toBe(users);
    expect(await exported('UserPasswordReset')).toBe(resets);
  });

  it('users:add --password-stdin on a terminal reads standard input to its end and never prompts', async () => {
    // Typed, then Ctrl-D: the end of standard input, as a pipe ends.
    const ended = await onTerminal(
      env,
      [
        'users:add',
        '--email',
        'typed@example.test',
        '--name',
        'Typed',
        '--role',
        'viewer',
        '--password-stdin',
      ],
      'a-long-password-123\n\u0004',
    );
    expect(ended.output).not.toContain('Password:');
    expect(ended.output).toContain('Added Typed <typed@example.test> as viewer.');
    expect(ended.code, ended.output).toBe(0);
  });

  it('standard output on a full disk (`> /dev/full`) fails with one line saying so, not a stack trace', async () => {
    const full = openSync('/dev/full', 'w');
    try {
      for (const args of [['events:tail'], ['events:export'], ['projections:status']]) {
        const ran = await run(env, args, { stdout: full });
        expect(expectOneLine(ran, args.join(' ')), args.join(' ')).toBe(
          'Cannot write standard output: the disk is full.',
        );
        expect(ran.code, args.join(' ')).toBe(1);
      }
    } finally {
      closeSync(full);
    }
  });
});

/** Odd environments and interruptions: the process's own setting, the same on either backend. */
describe('operator commands: environment and interruptions', { timeout: 240_000 }, () => {
  let dir: string;
  let data: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rivals-cli-env-'));
    data = path.join(dir, 'data');
    expect((await run({ DATA_DIR: data }, ['migrate'])).code).toBe(0);
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  /** A `migrate` seen from the database: a transaction polling for the migration lock. */
  const WAITING = "query LIKE '%pg_try_advisory_xact_lock%' AND state = 'idle in transaction'";

  /**
   * Starts `migrate` while `holder` holds the migration lock (another process's migration under way),
   * and hands its run back once the database shows it waiting for the lock.
   */
  async function migrateWaitingForTheLock(db: { url?: string; pool: pg.Pool }, holder: pg.Client) {
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT pg_advisory_xact_lock(72656901)');
    const migrating = run({ DATABASE_URL: db.url ?? '', LOG_LEVEL: 'warn' }, ['migrate']);
    const waiting = async () =>
      (
        await db.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND ${WAITING}`,
        )
      ).rows[0]?.n === 1;
    await until(waiting, 'the command to wait for the migration lock', 60_000);
    // Wrapped: an async function's promise would wait for the command itself, which waits for the lock.
    return { migrating };
  }

  it.skipIf(!runs('postgres'))(
    "another process's migration under way: the command says it waits for it, then goes on",
    async () => {
      const db = await createTestDatabase('postgres');
      const holder = new pg.Client({ connectionString: db.url });
      try {
        const { migrating } = await migrateWaitingForTheLock(db, holder);
        await holder.query('ROLLBACK');
        const ran = await migrating;
        expect(ran.code, ran.stderr).toBe(0);
        expect(ran.stderr).toBe('Another process is migrating the database; waiting for it to finish…\n');
        expect(ran.stdout).toMatch(/^Nothing to apply; postgres:\/\/.+ is up to date\.\n$/);
      } finally {
        await holder.end().catch(() => undefined);
        await db.drop();
      }
    },
  );

  it.skipIf(!runs('postgres'))(
    'a database connection lost while the command runs fails with one line saying so and what to do, not a stack trace',
    async () => {
      const db = await createTestDatabase('postgres');
      const holder = new pg.Client({ connectionString: db.url });
      try {
        // The command waits for another migration: a wait that lasts until its connection is cut.
        const { migrating } = await migrateWaitingForTheLock(db, holder);
        // As a database restart or a failover does to it.
        await db.pool.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND ${WAITING}`,
        );
        const ran = await migrating;
        expect(ran.code).toBe(1);
        expect(ran.stdout).toBe('');
        const lines = ran.stderr.trim().split('\n');
        expect(lines[0]).toBe('Another process is migrating the database; waiting for it to finish…');
        expect(lines.slice(1).join('\n')).toMatch(
          /^The command did not finish: the connection to the database was lost \(.+\)\. Check that Postgres is running, then run the command again\.$/,
        );
        expect(ran.stderr).not.toMatch(/\n\s+at |"stack"/);
      } finally {
        await holder.query('ROLLBACK').catch(() => undefined);
        await holder.end().catch(() => undefined);
        await db.drop();
      }
    },
  );

  it.skipIf(!runs('postgres'))(
    'a connection lost during seed does not say to run it again (it would add as many again): it says how to count what was stored',
    async () => {
      const db = await createTestDatabase('postgres');
      const env = { DATABASE_URL: db.url ?? '', LOG_LEVEL: 'warn' };
      const competitors = async () =>
        (
          await db.pool.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM events WHERE type = 'CompetitorAdded'",
          )
        ).rows[0]?.n ?? 0;
      try {
        const seeding = run(env, ['seed', '--competitors', '1000000', '--batch', '100', '--seed', '4']);
        await until(async () => (await competitors()) >= 300, 'the seed to store a few batches', 120_000);
        // As a database that restarts, or fails over, does to it: its connections cut until it gives up
        // (one cut alone, the pool reconnects and the seed goes on).
        let ended = false;
        void seeding.then(() => (ended = true));
        for (const started = Date.now(); !ended && Date.now() - started < 60_000;) {
          await db.pool.query(
            'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
          );
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const ran = await seeding;
        expect(ran.code).toBe(1);
        expect(ran.hung, ran.stderr).toBe(false);
        // The last line. Not one line alone: before it come the bar's first line, and at times the log's
        // warning that an idle connection failed, with its stack (a defect of its own, not this one's).
        const line = ran.stderr.trim().split('\n').at(-1) ?? '';
        expect(line).not.toContain('run the command again');
        const said =
          /^The command did not finish: the connection to the database was lost \(.+\)\. Check that Postgres is running, then count what it stored before seeding the rest \(seed adds as many as asked again, it does not resume\): "npm run cli -- events:export --type CompetitorAdded --from (\d+) \| wc -l" \(it stored ([\d,]+) of 1,000,000 for certain, and perhaps the batch being written: up to 100 more; competitors the app added meanwhile count too\)\.$/.exec(
            line,
          );
        expect(said, line).not.toBeNull();
        const [, from = '', certain = ''] = said ?? [];
        // The count it gives is what this seed stored: all of the database's competitors here.
        const counted = await run(env, ['events:export', '--type', 'CompetitorAdded', '--from', from]);
        const stored = counted.stdout.split('\n').filter(Boolean).length;
        expect(stored).toBe(await competitors());
        const certainly = Number(certain.replaceAll(',', ''));
        expect(certainly).toBeGreaterThanOrEqual(300);
        expect(stored - certainly).toBeGreaterThanOrEqual(0);
        expect(stored - certainly).toBeLessThanOrEqual(100);
      } finally {
        await db.drop();
      }
    },
  );

  it('a database it cannot reach fails with one line naming DATABASE_URL, and nothing but data on standard output', async () => {
    // Port 1 refuses at once: the command retries (3 attempts), then gives up.
    const ran = await run({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/rivals', LOG_LEVEL: 'warn' }, [
      'events:export',
    ]);
    expect(ran.code).toBe(1);
    // The retry warnings went into the NDJSON on standard output (`events:export > backup.ndjson`).
    expect(ran.stdout).toBe('');
    expect(ran.stderr.trim().split('\n').at(-1)).toBe(
      'Cannot reach the database at postgres://127.0.0.1:1/rivals (connect ECONNREFUSED 127.0.0.1:1) after 3 attempts. Check DATABASE_URL and that Postgres is running.',
    );
    expect(ran.stderr).not.toMatch(/\n\s+at |"stack"/);
    const malformed = await run({ DATABASE_URL: 'postgres://[::1:5432/x' }, ['events:tail']);
    expect(expectOneLine(malformed, 'malformed')).toBe(
      'Invalid configuration: DATABASE_URL="postgres://[::1:5432/x" — expected a postgres:// or postgresql:// URL.',
    );
    expect(malformed.code).toBe(1);
  });

  it('an empty LOG_LEVEL is unset (as for the server); an unknown one is refused naming it', async () => {
    const empty = await run({ DATA_DIR: data, LOG_LEVEL: '' }, ['events:tail', '--limit', '1']);
    expectOneLine(empty, 'LOG_LEVEL=""');
    expect(empty.code, empty.stderr).toBe(0);
    const unknown = await run({ DATA_DIR: data, LOG_LEVEL: 'verbose' }, ['events:tail']);
    expect(expectOneLine(unknown, 'LOG_LEVEL=verbose')).toBe(
      'Invalid configuration: LOG_LEVEL="verbose" — expected one of fatal, error, warn, info, debug, trace, silent.',
    );
    expect(unknown.code).toBe(1);
  });

  it('a DATA_DIR that is a file, below one, or where no folder can be made is refused naming DATA_DIR, and the file is left as it was', async () => {
    const file = path.join(dir, 'not-a-folder');
    await writeFile(file, 'a file\n');
    const cases: [string, string][] = [
      [
        file,
        `DATA_DIR=${file} cannot be used as the data folder (it is a file, not a folder); set DATA_DIR to a folder this user can write.`,
      ],
      [
        path.join(file, 'data'),
        `DATA_DIR=${path.join(file, 'data')} cannot be used as the data folder (part of its path is a file, not a folder); set DATA_DIR to a folder this user can write.`,
      ],
      // A folder that exists but refuses children with ENOENT: Node's recursive mkdir looped forever.
      [
        '/proc/rivals-data',
        'DATA_DIR=/proc/rivals-data cannot be used as the data folder (its parent folder does not take new folders); set DATA_DIR to a folder this user can write.',
      ],
    ];
    for (const [value, message] of cases) {
      const ran = await run({ DATA_DIR: value }, ['events:tail']);
      expect(expectOneLine(ran, value)).toBe(message);
      expect(ran.code).toBe(1);
      expect(ran.stdout).toBe('');
    }
    expect(await readFile(file, 'utf8')).toBe('a file\n');
  });

  it('users:add refuses text-direction controls in --name before asking for a password, storing nothing', async () => {
    const ran = await run({ DATA_DIR: data }, [
      'users:add',
      '--email',
      'direction@example.test',
      '--name',
      'Evil\u202eCorp',
      '--role',
      'viewer',
      '--password-stdin',
    ]);
    expect(expectOneLine(ran, 'direction controls')).toBe(
      '--name: Name cannot contain text-direction controls (such as U+202E, right-to-left override): they make the text around it read differently from what it is.',
    );
    expect(ran.code).toBe(1);
    const users = await run({ DATA_DIR: data }, ['events:export', '--type', 'UserAdded']);
    expect(users.stdout).not.toContain('direction@example.test');
  });

  it('users:add with standard input closed or empty stores nothing and says what is missing', async () => {
    const ran = await run({ DATA_DIR: data }, [
      'users:add',
      '--email',
      'empty@example.test',
      '--name',
      'Empty',
      '--role',
      'viewer',
      '--password-stdin',
    ]);
    expect(expectOneLine(ran, 'empty stdin')).toBe('The password must be at least 12 characters.');
    expect(ran.code).toBe(1);
    const users = await run({ DATA_DIR: data }, ['events:export', '--type', 'UserAdded']);
    expect(users.stdout).not.toContain('empty@example.test');
  });

  // `script` (util-linux, in every Debian) gives the command a terminal, as an operator's shell does.
  it('Ctrl-C at the password prompt ends the command as Ctrl-C does (130), quietly, with no user added', async () => {
    const shell = [
      'env',
      '-i',
      `PATH=${process.env.PATH ?? ''}`,
      `DATA_DIR=${data}`,
      ...command,
      'users:add',
      '--email',
      'prompt@example.test',
      '--name',
      'Prompt',
      '--role',
      'admin',
    ]
      .map((word) => `'${word.replaceAll("'", `'\\''`)}'`)
      .join(' ');
    const ended = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn('script', ['-qec', shell, '/dev/null'], { cwd: root });
      let output = '';
      let sent = false;
      const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
      child.stdout.on('data', (d: Buffer) => {
        output += d.toString();
        if (!sent && output.includes('Password: ')) {
          sent = true;
          // The prompt is written just before the terminal goes raw.
          setTimeout(() => child.stdin.write('\u0003'), 500);
        }
      });
      child.on('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, output });
      });
    });
    expect(ended.output.replace(/\r/g, '')).toBe('Password: \n');
    expect(ended.code).toBe(130);
    const users = await run({ DATA_DIR: data }, ['events:export', '--type', 'UserAdded']);
    expect(users.stdout).not.toContain('prompt@example.test');
  });

  it('the password prompt is on the terminal when standard output goes to a file, which gets only the result', async () => {
    const file = path.join(dir, 'added.txt');
    const words = [
      'env',
      '-i',
      `PATH=${process.env.PATH ?? ''}`,
      `DATA_DIR=${data}`,
      ...command,
      'users:add',
      '--email',
      'redirected@example.test',
      '--name',
      'Redirected',
      '--role',
      'viewer',
    ];
    const shell = `${words.map((word) => `'${word.replaceAll("'", `'\\''`)}'`).join(' ')} > '${file}'`;
    const ended = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn('script', ['-qec', shell, '/dev/null'], { cwd: root });
      let output = '';
      let typed = false;
      // Typed once the prompt shows, or after 20 s without it (the prompt went elsewhere: the operator,
      // seeing nothing, types anyway).
      const type = () => {
        if (typed) return;
        typed = true;
        // The prompt is written just before the terminal goes raw.
        setTimeout(() => child.stdin.write('a-long-password-123\r'), 500);
      };
      const unseen = setTimeout(type, 20_000);
      const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
      child.stdout.on('data', (d: Buffer) => {
        output += d.toString();
        if (output.includes('Password: ')) type();
      });
      child.on('exit', (code) => {
        clearTimeout(unseen);
        clearTimeout(timer);
        resolve({ code, output });
      });
    });
    // Then the projection bars, on the terminal too (standard error); the password is not echoed.
    expect(ended.output.replace(/\r/g, '')).toMatch(/^Password: \n/);
    expect(ended.output).not.toContain('a-long-password-123');
    expect(ended.code).toBe(0);
    expect(await readFile(file, 'utf8')).toBe('Added Redirected <redirected@example.test> as viewer.\n');
  });

  it('Ctrl-C during seed and during events:export --out: ended by the signal, the log consistent, no partial file', async () => {
    const big = path.join(dir, 'big');
    const seed = spawn(command[0] as string, [...command.slice(1), 'seed', '--competitors', '1000000'], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', DATA_DIR: big },
    });
    // Whatever happens to the test, no seed of a million competitors is left running.
    onTestFinished(() => void seed.kill('SIGKILL'));
    let seedErr = '';
    let seedOut = '';
    seed.stdout.on('data', (d: Buffer) => (seedOut += d.toString()));
    seed.stderr.on('data', (d: Buffer) => {
      // Its first bar line: it is appending. (Its bar may not move: the loop keeps the timers waiting.)
      if (!seedErr) setTimeout(() => seed.kill('SIGINT'), 5_000);
      seedErr += d.toString();
    });
    const seedEnded = await new Promise<NodeJS.Signals | null>((resolve) =>
      seed.on('exit', (_code, signal) => resolve(signal)),
    );
    expect(seedEnded).toBe('SIGINT');
    expect(seedErr).not.toMatch(/\n\s+at /);
    expect(seedErr).toContain('Ctrl-C: stopping after the batch being written');
    // It says how far it got, and that is what the log holds.
    const stopped = /Stopped by Ctrl-C after ([\d,]+) of 1,000,000 competitors/.exec(seedOut);
    expect(stopped, seedOut).not.toBeNull();
    const verified = await run({ DATA_DIR: big }, ['events:verify']);
    expect(verified.code, verified.stdout).toBe(0);
    expect(verified.stdout).toMatch(/^The log is consistent/);
    const added = await run({ DATA_DIR: big }, ['events:export', '--type', 'CompetitorAdded']);
    const said = Number(stopped?.[1]?.replaceAll(',', ''));
    expect(said).toBeGreaterThan(0);
    expect(added.stdout.trim().split('\n').length).toBe(said);

    const target = path.join(dir, 'export.ndjson');
    await writeFile(target, 'the previous export\n');
    const exporting = spawn(command[0] as string, [...command.slice(1), 'events:export', '--out', target], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', DATA_DIR: big },
    });
    onTestFinished(() => void exporting.kill('SIGKILL'));
    const partials = async () => (await readdir(dir)).filter((f) => f.endsWith('.partial'));
    const exported = new Promise<NodeJS.Signals | null>((resolve) =>
      exporting.on('exit', (_code, signal) => resolve(signal)),
    );
    let sawPartial = false;
    for (let i = 0; i < 1_500 && exporting.exitCode === null; i++) {
      if ((await partials()).length > 0) {
        sawPartial = true;
        exporting.kill('SIGINT');
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const signal = await exported;
    expect(sawPartial, 'the export was interrupted while writing').toBe(true);
    expect(signal).toBe('SIGINT');
    expect(await partials()).toEqual([]);
    expect(await readFile(target, 'utf8')).toBe('the previous export\n');
  });
});
