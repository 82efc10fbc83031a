import { readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openEmbeddedDatabase } from '#infra/db/open-embedded.ts';
import { freePort } from '#tests/e2e/support/server.ts';
import {
  isAlive,
  lockOwner,
  startApp,
  startSupervised,
  stopAll,
  tempDataDir,
} from '#tests/support/app-process.ts';
import { TestClient } from '#tests/support/test-client.ts';
import { until } from '#tests/support/until.ts';

/**
 * The one-process product on a laptop (embedded PGlite in DATA_DIR), started, stopped and killed the way
 * a person or `npm start`'s supervisor does it (docs/decisions/0006, 0007).
 */
afterEach(stopAll);

const START_MS = 120_000;
/** A new data folder and a free port for one test. */
const fresh = async () => ({ dataDir: await tempDataDir(), port: await freePort() });
const competitor = (name: string) => ({
  name,
  website: 'https://example.com',
  segmentId: 'enterprise',
  threat: 'high',
  headquarters: 'Springfield',
});
/** The words of an HTML page's main content. */
const readable = (html: string) =>
  (/<main[^>]*>([\s\S]*)<\/main>/.exec(html)?.[1] ?? html)
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#x27;/g, "'")
    .replace(/\s+/g, ' ');
/** The signals a process handles (SigCgt in /proc: bit n-1 for signal n), 0 once it is gone. */
const caughtSignals = async (pid: number) =>
  BigInt(
    `0x${/^SigCgt:\s*([0-9a-f]+)$/m.exec(await readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''))?.[1] ?? '0'}`,
  );
const answers = async (port: number) =>
  fetch(`http://127.0.0.1:${port}/healthz`).then(
    () => true,
    () => false,
  );

describe('the embedded process', () => {
  it(
    'stops, freeing the port and the data folder, when its supervisor is killed',
    async () => {
      const { dataDir, port } = await fresh();
      const supervisor = startApp(
        { DATA_DIR: dataDir, PORT: String(port), ADMIN_PASSWORD: 'lifecycle-pass-1' },
        'web/supervisor.server.mjs',
      );
      await supervisor.printed('Rivals is running', START_MS);
      const server = await lockOwner(dataDir);
      expect(server).toBeDefined();

      supervisor.child.kill('SIGKILL');
      await until(() => !isAlive(server ?? 0), 'the orphaned server to stop', 20_000);
      expect(await lockOwner(dataDir)).toBeUndefined();
      expect(await answers(port)).toBe(false);
    },
    START_MS + 30_000,
  );

  it(
    'closing the terminal (SIGHUP to the supervisor and the server) stops both cleanly, lock released',
    async () => {
      const { dataDir, port } = await fresh();
      const supervisor = startApp(
        { DATA_DIR: dataDir, PORT: String(port), ADMIN_PASSWORD: 'lifecycle-pass-1', LOG_LEVEL: 'info' },
        'web/supervisor.server.mjs',
      );
      await supervisor.printed('Rivals is running', START_MS);
      const server = await lockOwner(dataDir);
      // The terminal sends SIGHUP to its whole process group.
      supervisor.child.kill('SIGHUP');
      process.kill(server ?? 0, 'SIGHUP');
      expect(await supervisor.exited).toBe(0);
      expect(supervisor.stdout()).toContain('shutting down');
      expect(await lockOwner(dataDir)).toBeUndefined();
    },
    START_MS + 30_000,
  );

  it('Ctrl+C while the server is still loading (npm start) ends the supervisor with 0, quietly, lock free', async () => {
    const { dataDir, port } = await fresh();
    // The supervisor has spawned its server, which takes a second or two to load its modules: no
    // handler of its own is installed yet when the terminal's SIGINT reaches the whole group.
    const { supervisor, server } = await startSupervised({
      DATA_DIR: dataDir,
      PORT: String(port),
      ADMIN_PASSWORD: 'lifecycle-pass-1',
    });
    process.kill(-(supervisor.child.pid ?? 0), 'SIGINT');
    expect(await supervisor.exited).toBe(0);
    expect(supervisor.stderr()).toBe('');
    expect(isAlive(server)).toBe(false);
    expect(await lockOwner(dataDir)).toBeUndefined();
  }, 30_000);

  it('npm start runs the supervisor on plain Node, so Ctrl+C from its first moment ends it with 0, quietly', async () => {
    // It was `node --import tsx web/supervisor.server.ts`: tsx loaded first (about 0.3 s), with no
    // handler installed, and a Ctrl+C then ended the supervisor by the signal's default action.
    const { scripts } = JSON.parse(await readFile('package.json', 'utf8')) as { scripts: { start: string } };
    expect(scripts.start.split('&&').at(-1)?.trim()).toBe('node web/supervisor.server.mjs');
    const { dataDir, port } = await fresh();
    const supervisor = startApp(
      { DATA_DIR: dataDir, PORT: String(port), ADMIN_PASSWORD: 'lifecycle-pass-1' },
      'web/supervisor.server.mjs',
      { ownGroup: true },
    );
    const pid = supervisor.child.pid ?? 0;
    // The first moment its own handlers are in: Node itself catches SIGINT and SIGTERM from its start
    // (to exit by them after restoring the terminal), not SIGHUP, installed in the same loop. SigCgt in
    // /proc has bit n-1 for signal n; SIGHUP is 1.
    await until(
      async () => ((await caughtSignals(pid)) & 1n) !== 0n,
      'the supervisor to handle its stop signals',
      10_000,
    );
    process.kill(-pid, 'SIGINT');
    expect(await supervisor.exited).toBe(0);
    expect(supervisor.stderr()).toBe('');
    expect(await lockOwner(dataDir)).toBeUndefined();
  }, 30_000);

  it(
    'a first start that finds its port taken creates no admin: the next start shows the password',
    async () => {
      const dataDir = await tempDataDir();
      const taken = createServer();
      const port = await freePort();
      await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
      try {
        const first = startApp({ DATA_DIR: dataDir, PORT: String(port) });
        expect(await first.exited).toBe(1);
        expect(first.stderr()).toContain(`Port ${port} is already in use`);
        expect(first.stdout()).not.toContain('password:');
      } finally {
        taken.close();
      }
      const again = startApp({ DATA_DIR: dataDir, PORT: String(await freePort()) });
      await again.printed('Rivals is running', START_MS);
      expect(again.stdout()).toMatch(/First start: an admin was created[\s\S]*password: \S+/);
      expect(await again.stop()).toBe(0);
    },
    2 * START_MS,
  );

  it(
    'SIGTERM during the first start stops it cleanly (exit 0, lock released), and the next start completes it',
    async () => {
      const { dataDir, port } = await fresh();
      const first = startApp({ DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info' });
      await first.printed('database migrated', START_MS);
      expect(await first.stop()).toBe(0);
      expect(first.stdout()).not.toContain('Rivals is running');
      expect(await lockOwner(dataDir)).toBeUndefined();

      const again = startApp({ DATA_DIR: dataDir, PORT: String(port) });
      await again.printed('Rivals is running', START_MS);
      expect(again.stdout()).toContain('First start: an admin was created');
      expect(await again.stop()).toBe(0);
    },
    2 * START_MS,
  );

  it(
    'a damaged data folder stops the start with one line saying what to do, not a stack trace',
    async () => {
      const dataDir = await tempDataDir();
      const db = await openEmbeddedDatabase(dataDir);
      await db.close();
      // What a copy taken while running or a disk that failed can leave: the control file is gone.
      await rm(path.join(dataDir, 'pgdata', 'global', 'pg_control'));
      const server = startApp({ DATA_DIR: dataDir, PORT: String(await freePort()) });
      expect(await server.exited).toBe(1);
      const lines = server.stderr().trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(`^The database in ${path.join(dataDir, 'pgdata')} could not be opened \\(.+\\)`),
      );
      expect(lines[0]).toContain('Nothing was changed');
      expect(await lockOwner(dataDir)).toBeUndefined();
    },
    START_MS,
  );

  it(
    'a data folder deleted while running: /readyz and the log say so; writes and failed reads answer 503 saying why',
    async () => {
      const { dataDir, port } = await fresh();
      const server = startApp({ DATA_DIR: dataDir, PORT: String(port), ADMIN_PASSWORD: 'lifecycle-pass-1' });
      await server.printed('Rivals is running', START_MS);
      const admin = new TestClient(`http://127.0.0.1:${port}`);
      await admin.signIn('admin@rivals.local', 'lifecycle-pass-1');
      await admin.get('/competitors/new');
      const added = await admin.postForm('/competitors/new', competitor('Globex'));
      expect(added.status).toBe(302);
      const card = added.headers.get('location') ?? '';
      const competitorId = card.split('/').pop() ?? '';

      await rm(dataDir, { recursive: true, force: true });
      const readyz = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(readyz.status).toBe(503);
      expect(await readyz.json()).toMatchObject({ checks: { database: 'unavailable' } });
      await server.printed(`The data folder ${dataDir} was removed while Rivals was running`, 10_000);

      // PGlite writes into the files it still holds open: without a check, a save "succeeded" into
      // files nobody will read again.
      const saved = /the server's data folder is missing[\s\S]*Nothing was saved/;
      const form = await admin.postForm('/competitors/new', competitor('Initech'));
      expect(form.status).toBe(503);
      expect(readable(await form.text())).toMatch(saved);
      const note = await admin.postJson('/components/competitor-notes', {
        event: 'update-note',
        payload: { competitorId, column: 'pricing', value: 'Flat fee' },
        expect: { version: 0 },
      });
      expect(note.status).toBe(503);
      expect(((await note.json()) as { error: { message: string } }).error.message).toMatch(saved);
      const move = await admin.postForm('/ranking/move', { move: `${competitorId}:down`, expect: '1' });
      expect(move.status).toBe(503);
      // A read of a table whose file was not open yet (nothing read the ranking before) fails: it says why too, without a stack.
      const read = await admin.get('/ranking');
      expect(read.status).toBe(503);
      expect(readable(await read.text())).toMatch(/the server's data folder is missing/);
      expect(server.stdout() + server.stderr()).not.toMatch(/request failed|command failed|"stack"/);
      expect(server.child.exitCode).toBeNull();
      expect(await server.stop()).toBe(0);
    },
    START_MS,
  );
});
