import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '#infra/config.ts';
import { createSearchPageCache } from '#projections/search-pages.ts';
import { bootstrapContent } from '#services/bootstrap/bootstrap.ts';
import { bootstrapAdmin } from '#services/user/bootstrap-admin.ts';
import { createApp } from './app.server.ts';
import { loadAssets } from './assets/assets.server.ts';
import { cookieNames } from './auth/cookies.server.ts';
import { createLoginLimiter } from './auth/login-limiter.server.ts';
import type { SessionSignals } from './auth/session-signals.server.ts';
import { purgeExpiredSessions } from './auth/sessions.server.ts';
import { listenEarly } from './listen-early.server.ts';
import { listenUrl } from './listen-url.ts';
import type { ProcessParts } from './process-parts.server.ts';
import { createRealtime } from './realtime/realtime.server.ts';
import type { Runtime } from './runtime.server.ts';
import { loadSessionSecret } from './session-secret.server.ts';

const assetsDir = fileURLToPath(new URL('../dist/assets/', import.meta.url));

/**
 * The web role: port, session secret, assets and app first, the first start's content and admin last.
 * Whatever can fail the start (a taken port, unbuilt assets) fails it before an admin exists whose
 * generated password would be printed by nobody; and a stop asked for meanwhile (`stopIfAsked`) is
 * honoured between steps, never between creating the admin and printing its password.
 */
export async function startWeb(
  config: Config,
  runtime: Runtime,
  parts: ProcessParts,
  options: {
    signals: SessionSignals;
    stopIfAsked: () => void;
    registerInstance: (sessionSecret: string) => void;
  },
): Promise<void> {
  const { signals, stopIfAsked } = options;
  const early = await listenEarly(config.PORT, config.HOST);
  const server = (parts.server = early.server);
  server.keepAliveTimeout = 5_000;
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  const sessionSecret = await loadSessionSecret(config);
  const assets = await loadAssets(assetsDir);
  stopIfAsked();
  options.registerInstance(sessionSecret);
  const https = config.TRUST_PROXY === true;
  const sessions = {
    db: runtime.db.pool,
    secret: sessionSecret,
    https,
    cookies: cookieNames(https),
    signals,
    maxPerUser: config.SESSIONS_PER_USER,
    onWrite: runtime.writeReport('sessions'),
  };
  const app = createApp(
    {
      ...runtime,
      assets,
      sessionSecret,
      sessions,
      loginLimiter: createLoginLimiter(runtime.redis, config.REDIS_PREFIX),
      searchPages: createSearchPageCache(),
    },
    runtime.metrics,
  );
  const { redis, log } = runtime;
  parts.realtime = createRealtime({
    server,
    redis,
    sessions,
    signals,
    prefix: config.REDIS_PREFIX,
    trustProxy: config.TRUST_PROXY,
    log,
  });

  await bootstrapContent(runtime.store, runtime.route, { demoData: config.DEMO_DATA });
  stopIfAsked();
  const admin = await bootstrapAdmin(runtime.db.pool, runtime.store, runtime.route, {
    email: config.ADMIN_EMAIL,
    password: config.ADMIN_PASSWORD,
  });
  await runtime.store.notifyAppended();
  // Expired sessions are refused on use; this only keeps the table small.
  const purge = setInterval(
    () => void purgeExpiredSessions(runtime.db.pool).catch(() => undefined),
    60 * 60 * 1000,
  );
  purge.unref();
  early.serve(app.callback());
  printBanner(config, runtime, admin);
}

function printBanner(
  config: Config,
  runtime: Runtime,
  admin: { email: string; password: string } | undefined,
) {
  const where =
    config.mode === 'embedded'
      ? `embedded database in ${path.resolve(config.DATA_DIR)}`
      : runtime.db.describe;
  runtime.log.info({ port: config.PORT, role: config.ROLE, database: runtime.db.describe }, 'listening');
  // One write: whoever reads the output (a person, a supervisor, a test) sees the banner whole.
  const firstStart = admin
    ? `\nFirst start: an admin was created. Sign in with\n  email:    ${admin.email}\n  password: ${admin.password}\n` +
      'This password is shown only once; add more users at /users or with "npm run cli -- users:add".\n'
    : '';
  const { url, note } = listenUrl(config.HOST, config.PORT);
  process.stdout.write(`\nRivals is running on ${url} (${note ? `${note}; ` : ''}${where})\n${firstStart}\n`);
}
