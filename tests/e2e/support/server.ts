import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

export const TEST_ADMIN_EMAIL = 'admin@rivals.test';
/** The bootstrap admin's password on every test server. */
export const TEST_ADMIN_PASSWORD = 'e2e-admin-password-0123';

const READY_TIMEOUT_MS = 120_000;
const STOP_GRACE_MS = 10_000;
const OUTPUT_LIMIT = 64 * 1024;

/** Settings the server reads (infra/config.ts); never inherited from the developer's shell. */
export const configKeys = [
  'PORT',
  'HOST',
  'DATA_DIR',
  'DATABASE_URL',
  'REDIS_URL',
  'SESSION_SECRET',
  'LOG_LEVEL',
  'ROLE',
  'TRUST_PROXY',
  'DEMO_DATA',
  'ADMIN_EMAIL',
  'ADMIN_PASSWORD',
  'REDIS_PREFIX',
  'BUS_CLAIM_IDLE_MS',
  'BUS_CONSUMER_IDLE_MS',
  'INBOX_RESEND_AFTER_MS',
  'METRICS_TOKEN',
  'READY_MAX_LAG_EVENTS',
  'READY_MAX_LAG_SECONDS',
];

export interface StartServerOptions {
  /** Extra environment for the server; wins over the defaults below. */
  env?: Record<string, string>;
  /** `embedded` (PGlite in a temp DATA_DIR, the default) or `postgres` (a fresh database on TEST_DATABASE_URL). */
  backend?: 'embedded' | 'postgres';
  /** A port to listen on (a restart of an earlier server keeps its address); default: a free one. */
  port?: number;
  /** An existing data directory (a restart keeps its data), left in place on stop; default: a fresh one. */
  dataDir?: string;
}

export interface RunningServer {
  url: string;
  port: number;
  dataDir: string;
  /** Its Postgres database (`backend: 'postgres'`), for tests that prepare data the UI cannot make. */
  databaseUrl: string | undefined;
  /** The server process, for tests that crash it (`process.kill(pid, 'SIGKILL')`, then `stop()`). */
  pid: number;
  /** What the server printed so far (stdout and stderr, last 64 KiB each), for failure messages. */
  output(): { stdout: string; stderr: string };
  stop(): Promise<void>;
}

/** A port nobody listens on right now: bind to 0, read the port, close. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => (port ? resolve(port) : reject(new Error('could not pick a free port'))));
    });
  });
}

async function withAdminClient<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A fresh Postgres database on TEST_DATABASE_URL; returns its URL and a function that drops it. */
async function createDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) throw new Error('startServer({ backend: "postgres" }) needs TEST_DATABASE_URL');
  const name = `rivals_e2e_${randomBytes(6).toString('hex')}`;
  await withAdminClient(adminUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await withAdminClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const done = exited(child);
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), STOP_GRACE_MS);
  });
  const outcome = await Promise.race([done.then(() => 'exited' as const), grace]);
  clearTimeout(timer);
  if (outcome === 'timeout') {
    child.kill('SIGKILL');
    await done;
  }
}

/**
 * Starts the real server (`node --import tsx web/main.server.ts`) on a free port with its own data
 * directory (and, for `postgres`, its own database), and resolves once GET /readyz answers 200.
 * Needs the browser bundle in dist/assets (Playwright's global setup builds it).
 */
export async function startServer(options: StartServerOptions = {}): Promise<RunningServer> {
  const backend = options.backend ?? 'embedded';
  const port = options.port ?? (await freePort());
  const ownDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'rivals-e2e-')));
  let database: { url: string; drop: () => Promise<void> } | undefined;
  try {
    if (backend === 'postgres') database = await createDatabase();
  } catch (error) {
    if (ownDataDir) await rm(dataDir, { recursive: true, force: true });
    throw error;
  }

  const inherited = { ...process.env };
  for (const key of configKeys) delete inherited[key];
  const env: NodeJS.ProcessEnv = {
    ...inherited,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    ADMIN_EMAIL: TEST_ADMIN_EMAIL,
    ADMIN_PASSWORD: TEST_ADMIN_PASSWORD,
    ...(database
      ? { DATABASE_URL: database.url, SESSION_SECRET: randomBytes(32).toString('hex') }
      : undefined),
    ...options.env,
  };

  const child = spawn(process.execPath, ['--import', 'tsx', 'web/main.server.ts'], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  const keep = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
    output[stream] = (output[stream] + chunk.toString('utf8')).slice(-OUTPUT_LIMIT);
  };
  child.stdout?.on('data', keep('stdout'));
  child.stderr?.on('data', keep('stderr'));

  let cleanedUp = false;
  const cleanup = async () => {
    if (cleanedUp) return;
    cleanedUp = true;
    await terminate(child);
    if (ownDataDir) await rm(dataDir, { recursive: true, force: true });
    await database?.drop();
  };

  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady(url, child, output);
  } catch (error) {
    await cleanup().catch(() => undefined);
    throw error;
  }

  return {
    ...{ url, port, dataDir, databaseUrl: database?.url, pid: child.pid ?? 0 },
    output: () => ({ ...output }),
    stop: cleanup,
  };
}

async function waitUntilReady(
  url: string,
  child: ChildProcess,
  output: { stdout: string; stderr: string },
): Promise<void> {
  let spawnError: Error | undefined;
  child.once('error', (error) => (spawnError = error));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let lastProblem = 'no answer yet';
  while (Date.now() < deadline) {
    if (spawnError) throw new Error(`could not start the server: ${spawnError.message}`);
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `the server exited before it was ready (${child.exitCode !== null ? `code ${child.exitCode}` : child.signalCode}):\n` +
          (output.stderr.trim() || output.stdout.trim() || '(no output)'),
      );
    }
    try {
      const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) });
      if (response.status === 200) return;
      lastProblem = `GET /readyz answered ${response.status}: ${await response.text()}`;
    } catch (error) {
      lastProblem = (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(
    `the server was not ready within ${READY_TIMEOUT_MS / 1000} s (${lastProblem}).\n${output.stderr.trim()}`,
  );
}
