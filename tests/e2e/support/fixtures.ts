import { test as base } from '@playwright/test';
import { startServer, type RunningServer } from './server.ts';

export { expect } from '@playwright/test';

interface WorkerFixtures {
  /** One server per Playwright worker (embedded backend, fresh data dir, demo data seeded). */
  server: RunningServer;
}

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- no test-scoped fixtures yet
export const test = base.extend<{}, WorkerFixtures>({
  server: [
    // Playwright requires a destructuring first argument; `provide` is its `use` (renamed so the
    // React hooks lint rule does not mistake it for React's `use`).
    // eslint-disable-next-line no-empty-pattern
    async ({}, provide) => {
      const server = await startServer();
      try {
        await provide(server);
      } finally {
        await server.stop();
      }
    },
    { scope: 'worker', timeout: 90_000 },
  ],
});
