import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedisClient } from '#infra/redis.ts';
import { startApp } from '#tests/support/app-process.ts';
import { TestClient } from '#tests/support/test-client.ts';
import { until } from '#tests/support/until.ts';
import { createRealtime } from '#web/realtime/realtime.server.ts';
import { backendUrl, runs } from '#tests/support/environment.ts';
import { silentLog } from '#tests/support/runtime-pieces.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/** Polls until `check` holds; fails naming `what` (a bound on waiting, not a timing assertion). */
async function waitFor(check: () => boolean, what: string, ms = 90_000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const count = (text: string, part: string) => text.split(part).length - 1;

/**
 * Processes as an operator runs them on Postgres and Redis (README, "Scaled"): a worker under the
 * supervisor, and the live-update channels of several deployments sharing one Redis server.
 */
describe.each(runs('postgres') && runs('redis') ? ['postgres+redis'] : [])('scaled processes on %s', () => {
  const databases: TestDatabase[] = [];
  afterAll(async () => Promise.all(databases.map((db) => db.drop())));

  it('a worker under `npm start` is restarted after a crash, and Ctrl+C stops it without an error', async () => {
    const db = await createTestDatabase('postgres');
    databases.push(db);
    const supervisor = spawn(process.execPath, ['web/supervisor.server.mjs'], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        ROLE: 'worker',
        HOST: '127.0.0.1',
        PORT: String(await freePort()),
        DATABASE_URL: db.url ?? '',
        REDIS_URL: backendUrl('redis'),
        REDIS_PREFIX: `test-worker-${randomUUID().slice(0, 8)}:`,
        SESSION_SECRET: 'w'.repeat(40),
        DEMO_DATA: 'false',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    supervisor.stdout.on('data', (d: Buffer) => (output += d.toString()));
    supervisor.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => supervisor.on('exit', (code) => resolve(code)));
    try {
      await waitFor(() => output.includes('worker started'), 'the worker to start');
      // The supervisor's child running the worker (tsx gives the supervisor an esbuild child too).
      const { stdout } = await promisify(execFile)('pgrep', [
        '-P',
        String(supervisor.pid),
        '-f',
        'web/main.server.ts',
      ]);
      const worker = Number(stdout.trim());
      process.kill(worker, 'SIGKILL');
      await waitFor(() => count(output, 'worker started') === 2, 'the worker to be restarted').catch(
        (error: Error) => {
          throw new Error(`${error.message}; the output:\n${output}`);
        },
      );
      expect(output).toContain('[supervisor] the server stopped (SIGKILL); restarting in 1 s.');

      supervisor.kill('SIGINT');
      expect(await exited).toBe(0);
      // Stopped right after its restart, with subscriptions perhaps still being set up: no error line
      // (a worker's realtime has no HTTP engine to close, and closing used to reject).
      // The output is the message: a failure here names the line (and CI keeps only part of its log).
      const errorLines = output.split('\n').filter((line) => /"level":(50|60)/.test(line));
      expect(errorLines, output).toEqual([]);
      expect(output, output).not.toContain('unexpected error');
    } finally {
      if (supervisor.exitCode === null) supervisor.kill('SIGKILL');
    }
  }, 240_000);

  it('messages on its live-update channels that it cannot read are ignored: the process stays up and keeps answering', async () => {
    // Anyone who can reach Redis (or an instance of another adapter version) can publish on these channels;
    // three bytes on `<prefix>socket.io#/#` threw in the Redis client's data handler and ended the process.
    const db = await createTestDatabase('postgres');
    databases.push(db);
    const prefix = `test-garbage-${randomUUID().slice(0, 8)}:`;
    const port = await freePort();
    const app = startApp({
      ROLE: 'all',
      PORT: String(port),
      DATABASE_URL: db.url ?? '',
      REDIS_URL: backendUrl('redis'),
      REDIS_PREFIX: prefix,
      SESSION_SECRET: 'g'.repeat(40),
    });
    const url = backendUrl('redis');
    const publisher = createRedisClient(url, silentLog, { name: 'test-garbage' });
    const listener = createRedisClient(url, silentLog, { name: 'test-garbage-answers', subscriber: true });
    try {
      await until(
        async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200,
        'the instance to be ready',
        120_000,
      );
      const nil = Buffer.from([0xc0]);
      // [uid "x", { nsp: "/" }, null]: a broadcast whose options are not an object.
      const noOptions = Buffer.from([0x93, 0xa1, 0x78, 0x81, 0xa3, 0x6e, 0x73, 0x70, 0xa1, 0x2f, 0xc0]);
      const garbage: [string, string | Buffer][] = [
        ['socket.io#/#', Buffer.from([0xc1, 0xff, 0x00])],
        ['socket.io#/#', 'hello'],
        ['socket.io#/#', nil],
        ['socket.io#/#', noOptions],
        ['socket.io#/#competitors#', Buffer.from([0xc1])],
        ['socket.io-request#/#', nil],
        ['socket.io-request#/#', JSON.stringify({ type: 0, requestId: 'r', rooms: 5 })],
        ['socket.io-request#/#', JSON.stringify({ type: 6, requestId: 'q', data: 5 })],
        ['socket.io-request#/#', JSON.stringify({ type: 4, opts: 5 })],
        ['socket.io-response#/#', nil],
      ];
      for (const [channel, message] of garbage)
        expect(await publisher.publish(`${prefix}${channel}`, message), channel).toBeGreaterThan(0);
      // A request it answers, sent after the garbage on the same channels: its answer means every message
      // before it was handled.
      const requestId = randomUUID();
      let answered = false;
      await listener.subscribe(`${prefix}socket.io-response#/#`);
      listener.on('message', (_channel: string, message: string) => {
        if (message.includes(requestId)) answered = true;
      });
      await publisher.publish(`${prefix}socket.io-request#/#`, JSON.stringify({ type: 1, requestId }));
      await until(() => answered || app.child.exitCode !== null, 'an answer to the request', 30_000);
      expect(app.stderr() + app.stdout()).not.toContain('unexpected error');
      expect(app.stderr() + app.stdout()).toContain(
        'live updates: ignored a message on Redis that this instance could not read',
      );
      expect(app.child.exitCode).toBe(null);
      expect(answered).toBe(true);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      publisher.disconnect();
      listener.disconnect();
      await app.stop();
    }
  }, 240_000);

  it('a message on its results channel that is not an outcome is ignored: the process stays up and its changes are answered', async () => {
    // Each web instance hears the outcomes of its commands on `<prefix>results:<instance>` (the name is in
    // every command on the bus, and PUBSUB CHANNELS lists it); a message there that was not JSON, or JSON
    // of another shape, threw in the Redis client's data handler and ended the process.
    const db = await createTestDatabase('postgres');
    databases.push(db);
    const prefix = `test-results-${randomUUID().slice(0, 8)}:`;
    const port = await freePort();
    const password = 'results-channel-password';
    const app = startApp({
      ROLE: 'all',
      PORT: String(port),
      DATABASE_URL: db.url ?? '',
      REDIS_URL: backendUrl('redis'),
      REDIS_PREFIX: prefix,
      SESSION_SECRET: 'r'.repeat(40),
      ADMIN_PASSWORD: password,
    });
    const publisher = createRedisClient(backendUrl('redis'), silentLog, { name: 'test-results-garbage' });
    try {
      const site = `http://127.0.0.1:${port}`;
      await until(
        async () => (await fetch(`${site}/readyz`).catch(() => undefined))?.status === 200,
        'the instance to be ready',
        120_000,
      );
      const channels = (await publisher.pubsub('CHANNELS', `${prefix}results:*`)) as string[];
      expect(channels).toHaveLength(1);
      const channel = channels[0] ?? '';
      for (const message of [
        'not json',
        'null',
        '5',
        JSON.stringify({ commandId: 5 }),
        JSON.stringify({ commandId: randomUUID(), outcome: null }),
        JSON.stringify({ commandId: randomUUID(), outcome: { status: 'accepted' } }),
      ])
        expect(await publisher.publish(channel, message), message).toBe(1);
      // A change made after them is answered through the same channel.
      const admin = new TestClient(site);
      await admin.signIn('admin@rivals.local', password);
      await admin.get('/competitors/new');
      const added = await admin.postForm('/competitors/new', {
        name: `After garbage ${randomUUID().slice(0, 8)}`,
        website: '',
        segmentId: 'smb',
        threat: 'low',
        headquarters: '',
        _idempotency_key: randomUUID(),
      });
      expect(added.status, app.stderr()).toBe(302);
      expect(app.stderr() + app.stdout()).not.toContain('unexpected error');
      expect(app.child.exitCode).toBe(null);
      expect(app.stderr() + app.stdout()).toContain(
        'command results: ignored a message that is not an outcome',
      );
    } finally {
      publisher.disconnect();
      await app.stop();
    }
  }, 240_000);

  it("one deployment's live updates are published on its own REDIS_PREFIX channels only", async () => {
    const url = backendUrl('redis');
    const listener = createRedisClient(url, silentLog, { name: 'test-listener', subscriber: true });
    const redis = createRedisClient(url, silentLog, { name: 'test-realtime' });
    const prefix = `test-deployment-${randomUUID().slice(0, 8)}:`;
    const realtime = createRealtime({ redis, prefix, log: silentLog });
    try {
      // Every Socket.IO adapter channel of every deployment on this server (unprefixed ones included);
      // other suites broadcast too, so only the messages carrying this test's marker count.
      const marker = randomUUID();
      const channels: string[] = [];
      await listener.psubscribe('*socket.io#*');
      listener.on('pmessageBuffer', (_pattern: Buffer, channel: Buffer, message: Buffer) => {
        if (message.includes(marker)) channels.push(channel.toString());
      });
      realtime.io.to('competitors').emit('competitors-changed', { marker });
      await waitFor(() => channels.length > 0, 'the broadcast on Redis', 10_000);
      expect(channels.every((channel) => channel.startsWith(`${prefix}socket.io#`))).toBe(true);
    } finally {
      await realtime.close();
      listener.disconnect();
      redis.disconnect();
    }
  });

  it('a broadcast after the live-update channel closed is dropped quietly, not an unhandled rejection', async () => {
    // A worker stopped while its runner still catches up: the change feed broadcast on a closed Redis client,
    // the adapter's publish rejected with nobody to catch it, and the process logged a fatal error.
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    const redis = createRedisClient(backendUrl('redis'), silentLog, { name: 'test-realtime-closed' });
    const realtime = createRealtime({
      redis,
      prefix: `test-closed-${randomUUID().slice(0, 8)}:`,
      log: silentLog,
    });
    try {
      await realtime.close();
      realtime.broadcast('competitors', 'change', { mark: '1:1' });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(rejections).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
      redis.disconnect();
    }
  });
});
