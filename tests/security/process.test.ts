import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { io } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '#tests/e2e/support/server.ts';
import { waitFor } from './support/helpers.ts';
import { createFigures, headerString } from './support/hostile.ts';

/**
 * The real thing, as `npm start` runs it: the supervisor and its server process (embedded). First the
 * socket repros that used to end the process and a barrage of hostile handshakes: the server must
 * still be the same process afterwards (same pid in the data-folder lock, no fatal log line). Then a
 * SIGKILLed server comes back under the supervisor, and SIGTERM stops everything with exit code 0.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const RUNS = Number(process.env.SECURITY_FUZZ_RUNS ?? 25);
/** A cold embedded start on a busy two-core machine can take well over a minute. */
const START_WAIT_MS = 170_000;

describe('npm start under attack', () => {
  const figures = createFigures();
  let dataDir: string;
  let url: string;
  let supervisor: ChildProcessWithoutNullStreams;
  let exited: Promise<number | null>;
  let output = '';

  const lockPid = async () =>
    (JSON.parse(await readFile(path.join(dataDir, 'rivals.lock'), 'utf8')) as { pid: number }).pid;
  const ready = async () => {
    try {
      return (await fetch(`${url}/readyz`)).status === 200;
    } catch {
      return false;
    }
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'rivals-supervisor-'));
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    supervisor = spawn(process.execPath, ['web/supervisor.server.mjs'], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        DEMO_DATA: 'false',
        ADMIN_PASSWORD: randomBytes(12).toString('hex'),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    supervisor.stdout.on('data', (d: Buffer) => (output += d.toString()));
    supervisor.stderr.on('data', (d: Buffer) => (output += d.toString()));
    exited = new Promise((resolve) => supervisor.on('exit', (code) => resolve(code)));
    await waitFor(ready, 'the first start', START_WAIT_MS);
  }, START_WAIT_MS + 10_000);

  afterAll(async () => {
    figures.print('embedded-process');
    if (supervisor?.exitCode === null) supervisor.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  const handshake = (headers: Record<string, string>, transport: 'websocket') =>
    new Promise<string>((resolve) => {
      const socket = io(url, { transports: [transport], reconnection: false, extraHeaders: headers });
      socket.once('connect', () => {
        socket.disconnect();
        resolve('connected');
      });
      socket.once('connect_error', (error: Error) => {
        socket.disconnect();
        resolve(error.message);
      });
    });
  const refused = (answer: string) => answer === 'sign in first' || answer === 'forbidden origin';

  it('survives the repros and a barrage of hostile handshakes as the same process', async () => {
    const pid = await lockPid();
    const host = new URL(url).host;

    // Repro 1a: a malformed cookie over long-polling: refused before any session (WebSocket only).
    const cookie = 'rivals_session=%E0%A4%A';
    const open = await fetch(`${url}/socket.io/?EIO=4&transport=polling`, { headers: { Cookie: cookie } });
    expect(open.status).toBe(400);
    expect(await open.text()).toContain('Transport unknown');
    expect(await handshake({ Cookie: cookie }, 'websocket')).toBe('sign in first');
    figures.record('process-repro', 200, 'polling cookie');
    // Repro 1b: WebSocket with a foreign, null or garbage Origin.
    for (const origin of ['null', 'garbage', `http://${host}.evil.example`]) {
      expect(await handshake({ Origin: origin, Cookie: 'rivals_session=x' }, 'websocket')).toBe(
        'forbidden origin',
      );
      figures.record('process-repro', 200, origin);
    }
    // Repro 5 on the process: deep JSON and a malformed asset path.
    const deep = await fetch(`${url}/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: url },
      body: '['.repeat(20_000) + ']'.repeat(20_000),
    });
    figures.record('process-repro', deep.status, 'deep json');
    expect(deep.status).toBe(400);
    const asset = await fetch(`${url}/assets/%E0%A4%A`);
    figures.record('process-repro', asset.status, 'asset');
    expect(asset.status).toBe(404);

    await fc.assert(
      fc.asyncProperty(
        headerString,
        headerString,
        fc.constant('websocket' as const),
        async (cookieValue, origin, transport) => {
          const answer = await handshake(
            { Cookie: `rivals_session=${cookieValue}`, Origin: origin },
            transport,
          );
          figures.record('process-handshake', refused(answer) ? 101 : 500, answer);
          return refused(answer);
        },
      ),
      { numRuns: RUNS * 4 },
    );

    expect(await ready()).toBe(true);
    expect(await lockPid()).toBe(pid);
    expect(output).not.toMatch(/unexpected error|restarting/);
  });

  it(
    'restarts a server that was SIGKILLed, and SIGTERM stops it with exit code 0',
    async () => {
      const first = await lockPid();
      process.kill(first, 'SIGKILL');
      await waitFor(
        async () => (await lockPid().catch(() => first)) !== first && (await ready()),
        'a restart',
        START_WAIT_MS,
      );
      expect(output).toContain('[supervisor] the server stopped (SIGKILL); restarting in 1 s.');
      supervisor.kill('SIGTERM');
      expect(await exited).toBe(0);
    },
    START_WAIT_MS + 30_000,
  );
});
