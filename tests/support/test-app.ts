import type { AddressInfo } from 'node:net';
import { createSearchPageCache } from '#projections/search-pages.ts';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '#infra/config.ts';
import { systemActor } from '#events/envelope.ts';
import type { Role } from '#events/user/fields.ts';
import { bootstrapContent } from '#services/bootstrap/bootstrap.ts';
import { createAccount } from '#services/user/accounts.ts';
import { createApp } from '#web/app.server.ts';
import { loadAssets } from '#web/assets/assets.server.ts';
import { cookieNames } from '#web/auth/cookies.server.ts';
import { createLoginLimiter } from '#web/auth/login-limiter.server.ts';
import { startRuntime, type Runtime } from '#web/runtime.server.ts';
import type { BackendKind } from './environment.ts';
import { silentLog } from './runtime-pieces.ts';
import { createTestDatabase, type TestDatabase } from './test-database.ts';
import { TestClient } from './test-client.ts';

export const TEST_PASSWORD = 'a-long-test-password';
/** The operators' token for GET /metrics in test apps. */
export const TEST_METRICS_TOKEN = 'test-metrics-token-0123456789';
export const testEmails: Record<Role, string> = {
  viewer: 'viewer@rivals.test',
  editor: 'editor@rivals.test',
  admin: 'admin@rivals.test',
};

export interface TestApp {
  url: string;
  db: TestDatabase;
  runtime: Runtime;
  userIds: Record<Role, string>;
  /** A client signed in with the given role, or signed out. */
  client(role?: Role): Promise<TestClient>;
  close(): Promise<void>;
}

const assetsDir = fileURLToPath(new URL('../../dist/assets/', import.meta.url));

/** The real app (runtime, worker, projections, HTTP) on a fresh database, listening on a free port. */
export async function startTestApp(
  backend: BackendKind,
  options: { demoData?: boolean; env?: Record<string, string> } = {},
): Promise<TestApp> {
  const db = await createTestDatabase(backend, { poolSize: 20 });
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    SESSION_SECRET: 'x'.repeat(40),
    METRICS_TOKEN: TEST_METRICS_TOKEN,
    ...options.env,
  });
  const runtime = await startRuntime(config, silentLog, { purpose: 'test', db });
  await bootstrapContent(runtime.store, runtime.route, { demoData: options.demoData ?? true });
  const userIds = await createTestUsers(runtime, 'test-user');
  await runtime.store.notifyAppended();
  const secret = 's'.repeat(40);
  const app = createApp(
    {
      ...runtime,
      assets: await loadAssets(assetsDir),
      sessionSecret: secret,
      sessions: {
        ...{ db: db.pool, secret, https: false, cookies: cookieNames(false) },
        maxPerUser: config.SESSIONS_PER_USER,
        onWrite: runtime.writeReport('sessions'),
      },
      loginLimiter: createLoginLimiter(undefined, 'test:'),
      searchPages: createSearchPageCache(),
    },
    runtime.metrics,
  );
  const server: Server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Users are visible to sign-in once the user list has caught up.
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM user_list');
    if ((rows[0]?.n ?? 0) >= 3) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    url,
    db,
    runtime,
    userIds,
    async client(role) {
      const client = new TestClient(url);
      if (role) await client.signIn(testEmails[role], TEST_PASSWORD);
      return client;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await runtime.close();
      await db.drop();
    },
  };
}

/** One user per role (viewer, editor, admin) with `testEmails` and TEST_PASSWORD; fixed command ids. */
export async function createTestUsers(
  runtime: Runtime,
  commandIdPrefix: string,
): Promise<Record<Role, string>> {
  const userIds = {} as Record<Role, string>;
  for (const role of ['viewer', 'editor', 'admin'] as const) {
    const { userId, outcome } = await createAccount(
      runtime.db.pool,
      (command) =>
        runtime.route({
          commandId: `${commandIdPrefix}-${role}`,
          correlationId: 'test',
          actor: systemActor,
          at: new Date().toISOString(),
          command,
        }),
      { email: testEmails[role], displayName: `Test ${role}`, role, password: TEST_PASSWORD },
    );
    if (outcome?.status !== 'accepted') throw new Error(`could not create the ${role} user`);
    userIds[role] = userId;
  }
  return userIds;
}
