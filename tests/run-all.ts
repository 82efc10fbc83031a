/**
 * `npm test`: the one test command. Probes the real services the suites use, says plainly which
 * suites cannot run and why (and fails on CI when anything is missing), then runs vitest and
 * Playwright in turn and ends with their `N passed, N failed` lines.
 *
 * A service it cannot reach is named in RIVALS_TEST_SKIP for the suites (tests/support/environment.ts),
 * so they leave that half out on purpose and say so; on CI nothing may be skipped. Vitest hands out the
 * files in a shuffled order, with the seed printed, and `RIVALS_TEST_SEED=<seed> npm test` repeats an
 * order that failed. The tests inside a file run in the order they are written: Vitest 4 does not apply
 * a project's `sequence.shuffle` to them (measured: eight tests, three seeds, written order each time).
 * Turning that on (`--sequence.shuffle.tests` works) needs every file checked under several seeds first;
 * ops.test.ts was one that depended on its order (fixed).
 */
import { execFile, spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { Redis } from 'ioredis';
import pg from 'pg';
import { parseSkipList, skipVariable, type Backend } from './support/environment.ts';

const PROBE_TIMEOUT_MS = 3_000;

const databaseUrl = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
const chromiumPath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const onCi = process.env.CI === 'true' || process.env.CI === '1';
const requestedSkip = parseSkipList(process.env[skipVariable]);
const seed = Number(process.env.RIVALS_TEST_SEED) || Math.floor(Math.random() * 2 ** 31);

/** A URL fit for printing: any password replaced. */
function shown(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

const reason = (error: unknown) =>
  (error instanceof Error ? error.message : String(error)) || 'unknown error';

async function probePostgres(url: string): Promise<string | undefined> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: PROBE_TIMEOUT_MS,
    query_timeout: PROBE_TIMEOUT_MS,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return reason(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function probeRedis(url: string): Promise<string | undefined> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: PROBE_TIMEOUT_MS,
    commandTimeout: PROBE_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  // ioredis rejects connect() with "Connection is closed."; the cause arrives as an 'error' event.
  let cause: unknown;
  redis.on('error', (error) => (cause ??= error));
  try {
    await redis.connect();
    await redis.ping();
    return undefined;
  } catch (error) {
    return reason(cause ?? error);
  } finally {
    redis.disconnect();
  }
}

async function probeChromium(path: string): Promise<string | undefined> {
  try {
    await access(path, constants.X_OK);
  } catch {
    return 'no executable there';
  }
  return new Promise((resolve) => {
    execFile(path, ['--version'], { timeout: 15_000 }, (error, stdout) => {
      if (error) resolve(`"${path} --version" failed: ${reason(error)}`);
      else
        resolve(/chrom/i.test(stdout) ? undefined : `"${path} --version" printed ${JSON.stringify(stdout)}`);
    });
  });
}

interface RunResult {
  name: string;
  exitCode: number;
  /** The last `N passed, N failed…` line the runner printed, if any. */
  counts: string | undefined;
}

const countLine = /^(\d+) passed, (\d+) failed\b.*$/;
// eslint-disable-next-line no-control-regex -- ANSI colour codes
const ansi = /\u001b\[[0-9;]*m/g;

let current: ReturnType<typeof spawn> | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    current?.kill(signal);
    process.exit(130);
  });
}

/** Runs a command with its output streamed through, remembering its count line. */
function run(name: string, command: string, args: string[], env: NodeJS.ProcessEnv): Promise<RunResult> {
  process.stdout.write(`\n━━ ${name}: ${command} ${args.join(' ')}\n\n`);
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, stdio: ['inherit', 'pipe', 'pipe'] });
    current = child;
    let counts: string | undefined;
    let pending = '';
    child.stdout.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const plain = line.replace(ansi, '').trim();
        if (countLine.test(plain)) counts = plain;
      }
    });
    child.stderr.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    child.on('error', (error) => {
      process.stderr.write(`could not start ${command}: ${error.message}\n`);
    });
    child.on('close', (code, signal) => {
      current = undefined;
      const plain = pending.replace(ansi, '').trim();
      if (countLine.test(plain)) counts = plain;
      resolve({ name, exitCode: code ?? (signal ? 1 : 0), counts });
    });
  });
}

const [postgresProblem, redisProblem, chromiumProblem] = await Promise.all([
  probePostgres(databaseUrl),
  probeRedis(redisUrl),
  probeChromium(chromiumPath),
]);

const env: NodeJS.ProcessEnv = { ...process.env };
delete env.TEST_DATABASE_URL;
delete env.TEST_REDIS_URL;
if (!postgresProblem) env.TEST_DATABASE_URL = databaseUrl;
if (!redisProblem) env.TEST_REDIS_URL = redisUrl;
if (process.stdout.isTTY && env.FORCE_COLOR === undefined) env.FORCE_COLOR = '1';
const skip = new Set<Backend>(requestedSkip);
if (postgresProblem) skip.add('postgres');
if (redisProblem) skip.add('redis');
if (skip.size > 0) env[skipVariable] = [...skip].join(',');
else delete env[skipVariable];

const missing: string[] = [];
if (postgresProblem)
  missing.push(
    `Postgres not reachable at ${shown(databaseUrl)} (${postgresProblem}) — the Postgres halves of the contract suites will not run.`,
  );
if (redisProblem)
  missing.push(
    `Redis not reachable at ${shown(redisUrl)} (${redisProblem}) — the Redis halves of the contract suites will not run.`,
  );
if (chromiumProblem)
  missing.push(
    `Chromium not usable at ${chromiumPath} (${chromiumProblem}) — the browser suite (Playwright) will not run. Install it with "apt-get install -y chromium fonts-liberation" or set CHROMIUM_PATH.`,
  );
for (const backend of requestedSkip)
  missing.push(
    `${skipVariable} names ${backend} — the ${backend} halves of the contract suites will not run.`,
  );

process.stdout.write(
  `Services: Postgres ${postgresProblem ? 'MISSING' : `ok (${shown(databaseUrl)})`}, ` +
    `Redis ${redisProblem ? 'MISSING' : `ok (${shown(redisUrl)})`}, ` +
    `Chromium ${chromiumProblem ? 'MISSING' : `ok (${chromiumPath})`}\n`,
);
for (const line of missing) process.stdout.write(`⚠ ${line}\n`);
if (missing.length > 0 && onCi) {
  process.stdout.write('\nCI=true: every suite must run here, so nothing was run. Fix the above first.\n');
  process.exit(1);
}
if (skip.size > 0) process.stdout.write(`${skipVariable}=${env[skipVariable]} for this run.\n`);
process.stdout.write(
  `Vitest order: shuffled with seed ${seed} (repeat it with RIVALS_TEST_SEED=${seed} npm test).\n`,
);

const results: RunResult[] = [];
// The fault test needs both real services and never skips; without them only unit and integration run.
const projects = skip.size > 0 ? ['--project', 'unit', '--project', 'integration'] : [];
if (skip.size > 0) missing.push('The fault suite (a real Postgres and Redis) will not run.');
// The order is set in vitest.config.ts from RIVALS_TEST_SEED: `--sequence.*` flags on the command line
// would replace each project's `sequence` (and with it the group order that runs fault suites last).
results.push(
  await run('vitest', 'npx', ['vitest', 'run', ...projects], { ...env, RIVALS_TEST_SEED: String(seed) }),
);
if (!chromiumProblem) {
  results.push(
    await run('playwright', 'npx', ['playwright', 'test'], {
      ...env,
      CHROMIUM_PATH: chromiumPath,
      PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1',
    }),
  );
}

let passed = 0;
let failed = 0;
process.stdout.write('\n━━ Summary\n');
for (const result of results) {
  const match = result.counts ? countLine.exec(result.counts) : null;
  let runnerFailed = Number(match?.[2] ?? 0);
  passed += Number(match?.[1] ?? 0);
  // A runner that failed without counting a failure (crash, config error) still counts as one.
  if (result.exitCode !== 0 && runnerFailed === 0) runnerFailed = 1;
  failed += runnerFailed;
  const status = result.exitCode === 0 ? 'ok' : `FAILED (exit code ${result.exitCode})`;
  process.stdout.write(`${result.name}: ${result.counts ?? 'no count line printed'} — ${status}\n`);
}
for (const line of missing) process.stdout.write(`not run: ${line}\n`);
process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
process.exit(results.every((r) => r.exitCode === 0) ? 0 : 1);
