import { defineConfig, devices } from '@playwright/test';
import { chromiumLaunchOptions } from './tests/support/chromium.ts';

/**
 * Browser tests. Chromium comes from the system (Debian `chromium`): `npx playwright install` cannot
 * download here. Each worker starts its own server (see tests/e2e/support/fixtures.ts).
 */
export default defineConfig({
  testDir: 'tests/e2e',
  globalSetup: './tests/e2e/support/global-setup.ts',
  workers: 2,
  retries: 0,
  forbidOnly: !!process.env.CI,
  // Sign-ins hash with scrypt and each worker runs its own server: room for a busy two-core machine.
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [['list'], ['./tests/support/playwright-count-reporter.ts']],
  use: {
    // Pages write times on the browser's clock: one zone for every spec unless it sets its own, whatever
    // the machine's is.
    timezoneId: 'UTC',
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
  projects: [
    {
      name: 'chromium',
      use: {
        ...devices['Desktop Chrome'],
        launchOptions: chromiumLaunchOptions,
      },
    },
  ],
});
