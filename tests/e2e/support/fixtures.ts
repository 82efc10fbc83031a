import { test as base, type WorkerFixture } from '@playwright/test';
import { startServer, type RunningServer, type StartServerOptions } from './server.ts';

export { expect } from '@playwright/test';

interface WorkerFixtures {
  /** One server per Playwright worker (embedded backend, fresh data dir, demo data seeded). */
  server: RunningServer;
}

/**
 * The `server` worker fixture. A spec that needs a server of its own (one it may disturb) registers it in
 * its own `extend` call: Playwright keys worker fixtures by where they are registered, so that spec then
 * runs in a worker of its own.
 */
export const serverFixture = serverFixtureWith();

/** The `server` worker fixture for a server started with `options` (a backend, extra environment). */
export function serverFixtureWith(
  options: StartServerOptions = {},
): [WorkerFixture<RunningServer, object>, { scope: 'worker'; timeout: number }] {
  return [
    // Playwright requires a destructuring first argument; `provide` is its `use` (renamed so the
    // React hooks lint rule does not mistake it for React's `use`).
    // eslint-disable-next-line no-empty-pattern
    async ({}, provide) => {
      const server = await startServer(options);
      try {
        await provide(server);
      } finally {
        await server.stop();
      }
    },
    { scope: 'worker', timeout: 150_000 },
  ];
}

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- no test-scoped fixtures yet
export const test = base.extend<{}, WorkerFixtures>({ server: serverFixture });
