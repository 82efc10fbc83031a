import { createServer, type Server } from 'node:http';
import { createSearchPageCache } from '#projections/search-pages.ts';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '#infra/config.ts';
import { StartupError } from '#infra/errors.ts';
import { startInstanceHeartbeat, type InstanceHeartbeat } from '#infra/instances.ts';
import { createLogger } from '#infra/logger.ts';
import { bootstrapContent } from '#services/bootstrap/bootstrap.ts';
import { bootstrapAdmin } from '#services/user/bootstrap-admin.ts';
import { createApp } from './app.server.ts';
import { loadAssets } from './assets/assets.server.ts';
import { cookieNames } from './auth/cookies.server.ts';
import { createLoginLimiter } from './auth/login-limiter.server.ts';
import { purgeExpiredSessions } from './auth/sessions.server.ts';
import { startRuntime } from './runtime.server.ts';
import { startChangeFeed } from './realtime/change-feed.server.ts';
import { createRealtime, type Realtime } from './realtime/realtime.server.ts';
import { startUserFeed } from './realtime/user-feed.server.ts';
import { createSessionSignals } from './auth/session-signals.server.ts';
import { installCrashPolicy } from './crash-policy.server.ts';
import { loadSessionSecret } from './session-secret.server.ts';
import { startWorkerHealth } from './worker-health.server.ts';

const SHUTDOWN_DEADLINE_MS = 10_000;
const assetsDir = fileURLToPath(new URL('../dist/assets/', import.meta.url));

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const log = createLogger(config.LOG_LEVEL);
  const runtime = await startRuntime(config, log, {
    purpose: `server on port ${config.PORT}`,
    claimIdleMs: config.BUS_CLAIM_IDLE_MS,
  });
  let server: Server | undefined;
  let realtime: Realtime | undefined;
  let heartbeat: InstanceHeartbeat | undefined;
  // What the runner tells after each batch; stopped first, so nothing is sent on channels being closed.
  const stopFeeds: (() => void)[] = [];

  const signals = createSessionSignals({ redis: runtime.redis, prefix: config.REDIS_PREFIX, log });

  let stopping = false;
  const shutdown = async (signal: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      log.error('shutdown took too long; exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS);
    deadline.unref();
    // Stop accepting, let in-flight requests finish, then close idle keep-alive sockets and pools.
    for (const stop of stopFeeds) stop();
    await heartbeat?.stop();
    await realtime?.close();
    await signals.close();
    await new Promise<void>((resolve) => {
      if (!server) return resolve();
      server.close(() => resolve());
      server.closeIdleConnections();
    });
    await runtime.close();
    clearTimeout(deadline);
    process.exit(exitCode);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  installCrashPolicy(log, (reason) => shutdown(reason, 1));

  // Every instance says which shared settings it runs with, and hears of those that differ (/ops).
  const registerInstance = (sessionSecret?: string) => {
    heartbeat = startInstanceHeartbeat({
      db: runtime.db.pool,
      instanceId: runtime.instanceId,
      settings: {
        role: config.ROLE,
        sessionSecret,
        redisPrefix: runtime.redis ? config.REDIS_PREFIX : undefined,
      },
      log,
      onCheck: (disagreements) => runtime.metrics.reportDisagreements(disagreements),
    });
  };

  if (config.ROLE !== 'worker') {
    await bootstrapContent(runtime.store, runtime.route, { demoData: config.DEMO_DATA });
    const admin = await bootstrapAdmin(runtime.db.pool, runtime.store, runtime.route, {
      email: config.ADMIN_EMAIL,
      password: config.ADMIN_PASSWORD,
    });
    await runtime.store.notifyAppended();
    const sessionSecret = await loadSessionSecret(config);
    registerInstance(sessionSecret);
    const assets = await loadAssets(assetsDir);
    const https = config.TRUST_PROXY === true;
    const appSessions = {
      db: runtime.db.pool,
      secret: sessionSecret,
      https,
      cookies: cookieNames(https),
      signals,
    };
    const app = createApp(
      {
        ...runtime,
        assets,
        sessionSecret,
        sessions: appSessions,
        loginLimiter: createLoginLimiter(runtime.redis, config.REDIS_PREFIX),
        searchPages: createSearchPageCache(),
      },
      runtime.metrics,
    );
    // Expired sessions are refused on use; this only keeps the table small.
    const purge = setInterval(
      () => void purgeExpiredSessions(runtime.db.pool).catch(() => undefined),
      60 * 60 * 1000,
    );
    purge.unref();
    server = createServer(app.callback());
    realtime = createRealtime({
      server,
      redis: runtime.redis,
      sessions: appSessions,
      signals,
      prefix: config.REDIS_PREFIX,
      log,
    });
    server.keepAliveTimeout = 5_000;
    server.requestTimeout = 30_000;
    server.headersTimeout = 10_000;
    await new Promise<void>((resolve, reject) => {
      server?.once('error', reject);
      server?.listen(config.PORT, config.HOST, resolve);
    });
    const where =
      config.mode === 'embedded'
        ? `embedded database in ${path.resolve(config.DATA_DIR)}`
        : runtime.db.describe;
    log.info({ port: config.PORT, role: config.ROLE, database: runtime.db.describe }, 'listening');
    // One write: whoever reads the output (a person, a supervisor, a test) sees the banner whole.
    const firstStart = admin
      ? `\nFirst start: an admin was created. Sign in with\n  email:    ${admin.email}\n  password: ${admin.password}\n` +
        'This password is shown only once; add more users at /users or with "npm run cli -- users:add".\n'
      : '';
    process.stdout.write(
      `\nRivals is running on http://localhost:${config.PORT} (${where})\n${firstStart}\n`,
    );
    // Under the supervisor (npm start): this child is up, so a later exit is a crash worth a restart.
    process.send?.('ready');
  } else {
    registerInstance();
    // A worker has no HTTP server, but it projects: it broadcasts through the Redis adapter.
    if (runtime.redis) realtime = createRealtime({ redis: runtime.redis, prefix: config.REDIS_PREFIX, log });
    // Under the supervisor (npm start): the worker works now, so a later death is a crash to restart.
    process.send?.('ready');
    // Health is for supervisors; a worker whose port is taken still works, and says so.
    server = await startWorkerHealth(runtime, runtime.metrics).catch((error: unknown) => {
      log.warn({ port: config.PORT, reason: (error as Error).message }, 'worker health endpoint not started');
      return undefined;
    });
    log.info(
      { role: config.ROLE, port: config.PORT },
      server ? 'worker started; health on /healthz and /readyz' : 'worker started; no health endpoint',
    );
  }
  if (runtime.runner && realtime) stopFeeds.push(startChangeFeed(runtime.runner, realtime));
  if (runtime.runner) stopFeeds.push(startUserFeed(runtime.runner, signals));
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof StartupError) {
    process.stderr.write(`${error.message}\n`);
  } else if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
    process.stderr.write(`Port ${process.env.PORT ?? 3000} is already in use. Set PORT to another port.\n`);
  } else if (
    ['ENOTFOUND', 'EADDRNOTAVAIL', 'EAI_AGAIN'].includes((error as NodeJS.ErrnoException).code ?? '')
  ) {
    process.stderr.write(
      `Invalid configuration: HOST="${process.env.HOST ?? ''}" — expected an address of this machine (e.g. 127.0.0.1 or 0.0.0.0).\n`,
    );
  } else {
    process.stderr.write(`Rivals could not start: ${(error as Error).message}\n`);
    console.error(error);
  }
  process.exit(1);
});
