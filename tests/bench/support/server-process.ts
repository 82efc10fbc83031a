import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { chromium, type Browser } from '@playwright/test';
import { TestClient } from '#tests/support/test-client.ts';
import { repoRoot, sleep } from './services.ts';

/** A free TCP port on the loopback interface. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  /** The last few kilobytes the process printed, for error messages. */
  output(): string;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  /** Arguments after `node --import tsx` (default: the app's entry, web/main.server.ts). */
  args?: string[];
  /** Keep stdout (default: discarded, so request logs cost the server what they cost in production). */
  keepStdout?: boolean;
}

/** Starts a Node process from the repository root with the given environment (PORT/HOST set by the caller). */
export function spawnNode(env: Record<string, string>, options: SpawnOptions = {}): ServerProcess {
  const args = ['--import', 'tsx', ...(options.args ?? ['web/main.server.ts'])];
  const child = spawn(process.execPath, args, {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_ENV: 'production', ...env },
    stdio: ['ignore', options.keepStdout ? 'pipe' : 'ignore', 'pipe'],
  });
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-8_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${env.PORT}`;
  return {
    url,
    child,
    exited,
    output: () => tail,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** `spawnNode` listening on 127.0.0.1 at a free port (set here: the env passes neither HOST nor PORT). */
export async function spawnLocal(
  env: Record<string, string>,
  options: SpawnOptions = {},
): Promise<ServerProcess> {
  // A bench is one user asking as fast as the server answers: the per-user request limit stays in the
  // path (its cost is measured) but so high that it never refuses.
  return spawnNode(
    { RATE_LIMIT_REQUESTS: '1000000', ...env, HOST: '127.0.0.1', PORT: String(await freePort()) },
    options,
  );
}

/**
 * Polls `url` until it answers `status` (connection refused counts as not yet); fails early if the
 * process exits, or after `timeoutMs`.
 */
export async function waitForStatus(
  server: ServerProcess,
  path: string,
  options: {
    status?: number;
    timeoutMs?: number;
    intervalMs?: number;
    headers?: Record<string, string>;
  } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  let last = 'no answer';
  for (;;) {
    if (server.child.exitCode !== null) {
      throw new Error(
        `server exited with ${server.child.exitCode} before ${path} answered:\n${server.output()}`,
      );
    }
    try {
      const response = await fetch(server.url + path, { headers: options.headers, redirect: 'manual' });
      await response.arrayBuffer();
      if (response.status === (options.status ?? 200)) return;
      last = `status ${response.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
    if (Date.now() > deadline)
      throw new Error(`${server.url}${path} did not answer in time (${last}):\n${server.output()}`);
    await sleep(options.intervalMs ?? 10);
  }
}

/**
 * Signs in like a browser (GET /login for the anonymous cookie and the CSRF token from
 * `<meta name="csrf-token">`, then POST /login) and returns the Cookie header of the signed-in session.
 * A 401 right after start means the user list has not caught up with the bootstrap yet: it retries
 * a few times (the limiter allows five failures a minute per account).
 */
export async function signIn(baseUrl: string, email: string, password: string): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const client = new TestClient(baseUrl);
    const page = await client.get('/login');
    if (page.status !== 200) throw new Error(`GET /login answered ${page.status}`);
    if (!client.csrfToken) throw new Error('GET /login carried no <meta name="csrf-token">');
    const response = await client.postForm('/login', { email, password });
    if (response.status === 302 && client.cookies.has('rivals_session')) return client.cookieHeader();
    if (response.status !== 401 || attempt >= 4) {
      throw new Error(
        `sign-in as ${email} failed with ${response.status}: ${(await response.text()).slice(0, 300)}`,
      );
    }
    // Up to 3 s in all: on a busy machine the projection can take that long after start.
    await sleep(500 * attempt);
  }
}

/** Counts the table rows of a rendered competitor list (`data-row-id` per row). */
export const countRows = (html: string): number => html.match(/data-row-id=/g)?.length ?? 0;

/** CPU time (user + system) the process has used so far, in ms, from /proc (Linux; NaN elsewhere). */
export async function processCpuMs(pid: number | undefined): Promise<number> {
  if (pid === undefined) return Number.NaN;
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start at state, field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}
/** USER_HZ: 100 on every Linux we run on. */
const CLOCK_TICKS = 100;

/**
 * CPU time (ms) of each process named `name` on this machine, by pid (e.g. `postgres`: the server and
 * the backends serving the app's queries), so a benchmark can count the database's work with the app's.
 */
export async function processesCpuMs(name: string): Promise<Map<number, number>> {
  const byPid = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    if (comm === name) byPid.set(Number(entry), await processCpuMs(Number(entry)));
  }
  return byPid;
}

/**
 * CPU (ms) the processes of `after` used since `before`, per pid: one that started meanwhile counts
 * whole, one that exited meanwhile is not in `after` (a sum of totals went negative when a busy backend
 * exited: its past CPU left the second sum).
 */
export function cpuUsedSince(before: Map<number, number>, after: Map<number, number>): number {
  let used = 0;
  for (const [pid, ms] of after) if (!Number.isNaN(ms)) used += ms - (before.get(pid) ?? 0);
  return used;
}

/** The app on `databaseUrl` with one bench admin and no demo data, for the browser benches. */
export async function spawnBenchApp(databaseUrl: string, adminPassword: string): Promise<ServerProcess> {
  return spawnLocal({
    DATABASE_URL: databaseUrl,
    SESSION_SECRET: 's'.repeat(40),
    LOG_LEVEL: 'warn',
    DEMO_DATA: 'false',
    ADMIN_EMAIL: 'bench@rivals.test',
    ADMIN_PASSWORD: adminPassword,
  });
}

/** Debian's Chromium (or CHROMIUM_PATH), headless, as the browser benches drive it. */
export const launchBenchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
