import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { io } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startServer, type RunningServer } from '#tests/e2e/support/server.ts';
import { waitFor } from './support/helpers.ts';
import { createFigures, headerString } from './support/hostile.ts';

/**
 * The real entry point, as a process: the socket repros that used to end it, then a barrage of
 * hostile handshakes. The process must still be the same one afterwards (same pid in the data-folder
 * lock, no fatal log line). Then `npm start`'s supervisor: a SIGKILLed server comes back, and SIGTERM
 * stops everything with exit code 0.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const RUNS = Number(process.env.SECURITY_FUZZ_RUNS ?? 25);
const lockPid = async (dataDir: string) =>
  (JSON.parse(await readFile(path.join(dataDir, 'rivals.lock'), 'utf8')) as { pid: number }).pid;

describe('the server process', () => {
  let server: RunningServer;
  const figures = createFigures();

  beforeAll(async () => {
    server = await startServer({ env: { DEMO_DATA: 'false' } });
  });
  afterAll(async () => {
    figures.print('embedded-process');
    await server?.stop();
  });

  const handshake = (headers: Record<string, string>, transport: 'websocket' | 'polling') =>
    new Promise<string>((resolve) => {
      const socket = io(server.url, { transports: [transport], reconnection: false, extraHeaders: headers });
      socket.once('connect', () => {
        socket.disconnect();
        resolve('connected');
      });
      socket.once('connect_error', (error: Error) => {
        socket.disconnect();
        resolve(error.message);
      });
    });

  it('survives the repros and a barrage of hostile handshakes as the same process', async () => {
    const pid = await lockPid(server.dataDir);
    const host = new URL(server.url).host;

    // Repro 1a: a malformed cookie over long-polling, then CONNECT.
    const base = `${server.url}/socket.io/?EIO=4&transport=polling`;
    const cookie = 'rivals_session=%E0%A4%A';
    const open = await fetch(base, { headers: { Cookie: cookie } });
    const sid = (JSON.parse((await open.text()).slice(1)) as { sid: string }).sid;
    await fetch(`${base}&sid=${sid}`, { method: 'POST', headers: { Cookie: cookie }, body: '40' });
    expect(await (await fetch(`${base}&sid=${sid}`, { headers: { Cookie: cookie } })).text()).toContain(
      'sign in first',
    );
    figures.record('process-repro', 200, 'polling cookie');
    // Repro 1b: WebSocket with a foreign, null or garbage Origin.
    for (const origin of ['null', 'garbage', `http://${host}.evil.example`]) {
      expect(await handshake({ Origin: origin, Cookie: 'rivals_session=x' }, 'websocket')).toBe(
        'forbidden origin',
      );
      figures.record('process-repro', 200, origin);
    }
    // Repro 5 on the process: deep JSON and a malformed asset path.
    const deep = await fetch(`${server.url}/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: server.url },
      body: '['.repeat(20_000) + ']'.repeat(20_000),
    });
    figures.record('process-repro', deep.status, 'deep json');
    expect(deep.status).toBe(400);
    const asset = await fetch(`${server.url}/assets/%E0%A4%A`);
    figures.record('process-repro', asset.status, 'asset');
    expect(asset.status).toBe(404);

    await fc.assert(
      fc.asyncProperty(
        headerString,
        headerString,
        fc.constantFrom('websocket' as const, 'polling' as const),
        async (cookieValue, origin, transport) => {
          const answer = await handshake(
            { Cookie: `rivals_session=${cookieValue}`, Origin: origin },
            transport,
          );
          figures.record(
            'process-handshake',
            answer === 'sign in first' || answer === 'forbidden origin' ? 101 : 500,
            answer,
          );
          return answer === 'sign in first' || answer === 'forbidden origin';
        },
      ),
      { numRuns: RUNS * 4 },
    );

    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    expect(await lockPid(server.dataDir)).toBe(pid);
    expect(server.output().stdout + server.output().stderr).not.toMatch(/unexpected error|"level":60/);
  });
});

describe('npm start (the supervisor)', () => {
  it('restarts a server that was SIGKILLed, and SIGTERM stops it with exit code 0', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'rivals-supervisor-'));
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'web/supervisor.server.ts'], {
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
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.resume();
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const ready = async () => {
      try {
        return (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200;
      } catch {
        return false;
      }
    };
    try {
      await waitFor(ready, 'the first start', 90_000);
      const first = await lockPid(dataDir);
      process.kill(first, 'SIGKILL');
      await waitFor(
        async () => (await lockPid(dataDir).catch(() => first)) !== first && (await ready()),
        'a restart',
        90_000,
      );
      expect(stderr).toContain('[supervisor] the server stopped (SIGKILL); restarting in 1 s.');
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
