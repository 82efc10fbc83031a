import { randomUUID } from 'node:crypto';
import { createSearchPageCache } from '#projections/search-pages.ts';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { io as connect, type Socket } from 'socket.io-client';
import type { Role } from '#events/user/fields.ts';
import { loadConfig } from '#infra/config.ts';
import { bootstrapContent } from '#services/bootstrap/bootstrap.ts';
import { createApp } from '#web/app.server.ts';
import { loadAssets } from '#web/assets/assets.server.ts';
import { cookieNames } from '#web/auth/cookies.server.ts';
import { createLoginLimiter } from '#web/auth/login-limiter.server.ts';
import { createSessionSignals, type SessionSignals } from '#web/auth/session-signals.server.ts';
import type { SessionOptions } from '#web/auth/sessions.server.ts';
import { createRealtime, type Realtime } from '#web/realtime/realtime.server.ts';
import { startAuditFeed } from '#web/realtime/audit-feed.server.ts';
import { startUserFeed } from '#web/realtime/user-feed.server.ts';
import { startRuntime, type Runtime } from '#web/runtime.server.ts';
import { backendUrl, runs } from '#tests/support/environment.ts';
import { addCompetitorCommand, envelope, silentLog } from '#tests/support/runtime-pieces.ts';
import { createTestUsers, TEST_PASSWORD, testEmails } from '#tests/support/test-app.ts';
import { TestClient } from '#tests/support/test-client.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';

/** The two ways Rivals runs: one process on PGlite, or Postgres with Redis (bus, adapter, signals). */
export type SecurityBackend = 'embedded' | 'postgres+redis';
export const securityBackends: SecurityBackend[] =
  runs('postgres') && runs('redis') ? ['embedded', 'postgres+redis'] : ['embedded'];

export const METRICS_TOKEN = 'metrics-token-for-the-security-suite';
const assetsDir = fileURLToPath(new URL('../../../dist/assets/', import.meta.url));

export interface SecurityApp {
  url: string;
  db: TestDatabase;
  runtime: Runtime;
  realtime: Realtime;
  signals: SessionSignals;
  sessions: SessionOptions;
  userIds: Record<Role, string>;
  client(role?: Role): Promise<TestClient>;
  /** A Socket.IO client with the given handshake; never reconnects on its own. */
  socket(options: {
    cookie?: string;
    origin?: string;
    auth?: Record<string, unknown>;
    query?: Record<string, string>;
    transport?: 'websocket';
  }): Socket;
  close(): Promise<void>;
}

/**
 * The real app with what `web/main.server.ts` adds around it — realtime bound to sessions, session
 * signals, the user-list and audit reactors, a metrics token — on a fresh database (and Redis prefix).
 */
export async function startSecurityApp(
  backend: SecurityBackend,
  options: { env?: Record<string, string> } = {},
): Promise<SecurityApp> {
  const db = await createTestDatabase(backend === 'embedded' ? 'embedded' : 'postgres', { poolSize: 20 });
  const secret = 's'.repeat(40);
  const prefix = `test-security-${randomUUID().slice(0, 8)}:`;
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    SESSION_SECRET: secret,
    METRICS_TOKEN,
    ...options.env,
    ...(backend === 'postgres+redis'
      ? { DATABASE_URL: db.url, REDIS_URL: backendUrl('redis'), REDIS_PREFIX: prefix }
      : {}),
  });
  const runtime = await startRuntime(config, silentLog, { purpose: 'security test', db });
  // Segments and one competitor: enough to aim at, quicker to start than the demo data.
  await bootstrapContent(runtime.store, runtime.route, { demoData: false });
  await runtime.route(envelope(addCompetitorCommand('Target Corp')));
  const userIds = await createTestUsers(runtime, 'security-user');
  await runtime.store.notifyAppended();
  const signals = createSessionSignals({ redis: runtime.redis, prefix: config.REDIS_PREFIX, log: silentLog });
  const sessions: SessionOptions = {
    db: db.pool,
    secret,
    https: false,
    cookies: cookieNames(false),
    signals,
    maxPerUser: config.SESSIONS_PER_USER,
  };
  const app = createApp(
    {
      ...runtime,
      assets: await loadAssets(assetsDir),
      sessionSecret: secret,
      sessions,
      loginLimiter: createLoginLimiter(runtime.redis, `${prefix}limits:`),
      searchPages: createSearchPageCache(),
    },
    runtime.metrics,
  );
  const server: Server = createServer(app.callback());
  const realtime = createRealtime({
    server,
    redis: runtime.redis,
    sessions,
    signals,
    prefix,
    log: silentLog,
  });
  const stopFeeds = runtime.runner
    ? [startUserFeed(runtime.runner, signals), startAuditFeed(runtime.runner, realtime)]
    : [];
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const { rows } = await db.pool.query<{ n: number }>(
      'SELECT (SELECT count(*) FROM user_list)::int + (SELECT count(*) FROM competitor_list)::int AS n',
    );
    if ((rows[0]?.n ?? 0) >= 4) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const sockets = new Set<Socket>();
  return {
    url,
    db,
    runtime,
    realtime,
    signals,
    sessions,
    userIds,
    async client(role) {
      const client = new TestClient(url);
      if (role) await client.signIn(testEmails[role], TEST_PASSWORD);
      return client;
    },
    socket(handshake) {
      const extraHeaders: Record<string, string> = {};
      if (handshake.cookie !== undefined) extraHeaders.Cookie = handshake.cookie;
      if (handshake.origin !== undefined) extraHeaders.Origin = handshake.origin;
      const socket = connect(url, {
        path: '/socket.io',
        transports: [handshake.transport ?? 'websocket'],
        reconnection: false,
        forceNew: true,
        timeout: 5_000,
        extraHeaders,
        ...(handshake.auth ? { auth: handshake.auth } : {}),
        ...(handshake.query ? { query: handshake.query } : {}),
      });
      sockets.add(socket);
      return socket;
    },
    async close() {
      for (const socket of sockets) socket.disconnect();
      for (const stop of stopFeeds) stop();
      await realtime.close();
      await signals.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      if (runtime.redis) {
        const keys = await runtime.redis.keys(`${prefix}*`).catch(() => [] as string[]);
        if (keys.length > 0) await runtime.redis.del(...keys).catch(() => undefined);
      }
      await runtime.close();
      await db.drop();
    },
  };
}

/** How a handshake ended: connected, or refused with the server's message. */
export function handshakeResult(socket: Socket): Promise<{ connected: boolean; message: string }> {
  return new Promise((resolve) => {
    socket.once('connect', () => resolve({ connected: true, message: '' }));
    socket.once('connect_error', (error: Error) => resolve({ connected: false, message: error.message }));
  });
}

/** Resolves with the disconnect reason (and whether `session-ended` was heard first). */
export function disconnection(socket: Socket): Promise<{ reason: string; told: boolean; at: number }> {
  let told = false;
  socket.once('session-ended', () => (told = true));
  return new Promise((resolve) =>
    socket.once('disconnect', (reason) => resolve({ reason, told, at: Date.now() })),
  );
}

/** The app with an admin and an editor signed in: what most security suites start from. */
export async function startSecuritySuite(backend: SecurityBackend) {
  const app = await startSecurityApp(backend);
  return { app, admin: await app.client('admin'), editor: await app.client('editor') };
}
