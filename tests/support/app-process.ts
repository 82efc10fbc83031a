import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { until } from './until.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

export interface AppProcess {
  child: ChildProcessWithoutNullStreams;
  /** The exit code, or the signal's name when a signal ended it. */
  exited: Promise<number | string | null>;
  stdout(): string;
  stderr(): string;
  /** Resolves once the output holds `text`; fails if the process exits first or after `timeoutMs`. */
  printed(text: string | RegExp, timeoutMs?: number): Promise<void>;
  /** SIGTERM, as Ctrl+C or an orchestrator stops it; resolves with how it exited. */
  stop(): Promise<number | string | null>;
}

/**
 * The real entry point as a person starts it: `web/main.server.ts` (or the supervisor) embedded, from the
 * repository root, with only the environment given here. The caller ends it; `stopAll` kills what is left.
 */
export function startApp(
  env: Record<string, string>,
  entry = 'web/main.server.ts',
  options: { ownGroup?: boolean } = {},
): AppProcess {
  // The supervisor is plain JavaScript, run as `npm start` runs it; the server is TypeScript, run by tsx.
  const args = entry.endsWith('.mjs') ? [entry] : ['--import', 'tsx', entry];
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', HOST: '127.0.0.1', DEMO_DATA: 'false', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
    // Its own process group (default false), as a terminal's foreground job: Ctrl+C signals all of it.
    detached: options.ownGroup ?? false,
  });
  started.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | string | null>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal)),
  );
  const ended = () => child.exitCode !== null || child.signalCode !== null;
  return {
    child,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    async printed(text, timeoutMs = 120_000) {
      const seen = () =>
        typeof text === 'string' ? (stdout + stderr).includes(text) : text.test(stdout + stderr);
      await until(() => seen() || ended(), `output ${String(text)}`, timeoutMs);
      if (!seen()) throw new Error(`exited before printing ${String(text)}:\n${stdout}\n${stderr}`);
    },
    stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * `npm start`'s supervisor in a process group of its own, as a terminal's foreground job, once it has
 * spawned its server: `server` is that server's pid, still loading its modules (a second or more).
 */
export async function startSupervised(
  env: Record<string, string>,
): Promise<{ supervisor: AppProcess; server: number }> {
  const supervisor = startApp(env, 'web/supervisor.server.mjs', { ownGroup: true });
  let server: number | undefined;
  await until(
    async () => (server = (await childrenOf(supervisor.child.pid ?? 0))[0]) !== undefined,
    'the supervisor to start its server',
    10_000,
  );
  return { supervisor, server: server ?? 0 };
}

const started = new Set<ChildProcessWithoutNullStreams>();
const folders: string[] = [];

export async function tempDataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rivals-lifecycle-'));
  folders.push(dir);
  return dir;
}

/** The pid the data folder's lock names, or undefined when there is no lock. */
export async function lockOwner(dataDir: string): Promise<number | undefined> {
  try {
    return (JSON.parse(await readFile(path.join(dataDir, 'rivals.lock'), 'utf8')) as { pid: number }).pid;
  } catch {
    return undefined;
  }
}

/** The pids of `pid`'s child processes (Linux /proc). */
export async function childrenOf(pid: number): Promise<number[]> {
  const listed = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return listed.split(' ').filter(Boolean).map(Number);
}

export const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Whether `pid` is a live process started with DATA_DIR=`dir` (not a stranger that reused the pid). */
async function runsOn(pid: number, dir: string): Promise<boolean> {
  const environ = await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '');
  return environ.split('\0').includes(`DATA_DIR=${dir}`);
}

/** Kills every process started here (and any server a lock still names), then removes the folders. */
export async function stopAll(): Promise<void> {
  for (const dir of folders) {
    const owner = await lockOwner(dir);
    if (owner && (await runsOn(owner, dir))) process.kill(owner, 'SIGKILL');
  }
  for (const child of started)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  started.clear();
  await Promise.all(folders.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}
