import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '#infra/config.ts';
import { migrate } from '#infra/db/migrate.ts';
import { openDatabase } from '#infra/db/open-database.ts';
import { StartupError } from '#infra/errors.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { silentLog } from '#tests/support/runtime-pieces.ts';
import { createTestDatabase } from '#tests/support/test-database.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dirs: string[] = [];
afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

const tempDir = async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rivals-startup-'));
  dirs.push(dir);
  return dir;
};

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/** Starts the real entry point; resolves when it prints that it is running (or exits). */
function startServer(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'web/main.server.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const ready = new Promise<boolean>((resolve) => {
    const check = setInterval(() => {
      if (stdout.includes('Rivals is running')) {
        clearInterval(check);
        resolve(true);
      }
    }, 50);
    void exited.then(() => {
      clearInterval(check);
      resolve(false);
    });
  });
  return { child, ready, exited, output: () => ({ stdout, stderr }) };
}

describe('start-up', () => {
  it('PORT=abc stops with one line naming the variable, the value and what is expected', async () => {
    const server = startServer({ PORT: 'abc', DATA_DIR: await tempDir() });
    expect(await server.exited).toBe(1);
    expect(server.output().stderr.trim()).toBe(
      'Invalid configuration: PORT="abc" — expected an integer from 1 to 65535.',
    );
  });

  it('a HOST that is no address of this machine stops with one line naming it, not a stack trace', async () => {
    const server = startServer({ HOST: 'no-such-host.invalid', PORT: '3999', DATA_DIR: await tempDir() });
    expect(await server.exited).toBe(1);
    expect(server.output().stderr.trim()).toBe(
      'Invalid configuration: HOST="no-such-host.invalid" — expected an address of this machine (e.g. 127.0.0.1 or 0.0.0.0).',
    );
  });

  it('a session-secret file the server cannot use stops with one line naming it, not a stack trace', async () => {
    // A folder in its place (as root, the only unusable file a test can make: permissions do not stop root);
    // a file left by `sudo npm start` (owned by root, mode 600) failed the same way, with EACCES.
    const dataDir = await tempDir();
    await mkdir(path.join(dataDir, 'session-secret'));
    const server = startServer({ PORT: String(await freePort()), DATA_DIR: dataDir });
    expect(await server.exited).toBe(1);
    expect(server.output().stderr.trim()).toBe(
      `The session secret file ${path.join(dataDir, 'session-secret')} cannot be used (it is a folder, not a file). To go on, delete that folder to make a new secret (everyone is signed out).`,
    );
  }, 60_000);

  it('an unreachable database gets a clear message after retries, not a stack trace', async () => {
    const config = loadConfig({
      DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/nope`,
      SESSION_SECRET: 'x'.repeat(32),
    });
    const error = await openDatabase(config, silentLog, { purpose: 'test', attempts: 2 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StartupError);
    expect((error as Error).message).toMatch(
      /^Cannot reach the database at postgres:\/\/127\.0\.0\.1:\d+\/nope \(.+\) after 2 attempts\. Check DATABASE_URL/,
    );
  });

  it('serves, keeps its data across a restart, refuses a second process on the same folder, and stops cleanly on SIGTERM', async () => {
    const dataDir = await tempDir();
    const port = await freePort();
    const first = startServer({
      PORT: String(port),
      DATA_DIR: dataDir,
      ADMIN_PASSWORD: 'startup-test-password',
    });
    expect(await first.ready).toBe(true);
    expect(first.output().stdout).toContain('password: startup-test-password');
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);

    const second = startServer({ PORT: String(await freePort()), DATA_DIR: dataDir });
    expect(await second.exited).toBe(1);
    expect(second.output().stderr).toContain(`is in use by another Rivals process (pid ${first.child.pid}`);
    expect(second.output().stderr).not.toMatch(/\n\s+at /);

    // Exit code 0 is the graceful path; a hung shutdown fails on the test timeout, not on a stopwatch.
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    // A restart finds its data and does not create another admin or more demo rows.
    const again = startServer({ PORT: String(port), DATA_DIR: dataDir });
    expect(await again.ready).toBe(true);
    expect(again.output().stdout).not.toContain('First start');
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
    // Three app processes start here, each compiling on start: slow beside other suites on two cores.
  }, 180_000);
});

describe.each(databaseBackends)('migrations on %s', (backend) => {
  it('apply once; running again applies nothing; concurrent runs do not both migrate', async () => {
    const db = await createTestDatabase(backend, { migrate: false, poolSize: 5 });
    try {
      const runs = await Promise.all([migrate(db.pool), migrate(db.pool), migrate(db.pool)]);
      // Exactly one run applied everything; the others waited for its lock and found nothing to do.
      const applied = runs.filter((r) => r.length > 0);
      expect(applied).toHaveLength(1);
      expect(applied[0]?.[0]).toBe('001_event_store');
      expect(runs.flat()).toEqual(applied[0]);
      expect(await migrate(db.pool)).toEqual([]);
      const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations');
      expect(rows[0]?.n).toBeGreaterThanOrEqual(4);
      const ext = await db.pool.query(`SELECT similarity('northwind', 'northwynd') > 0.3 AS close`);
      expect(ext.rows[0]).toEqual({ close: true });
    } finally {
      await db.drop();
    }
  });
});
