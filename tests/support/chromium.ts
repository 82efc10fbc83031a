/**
 * How the e2e specs (playwright.config.ts) and the notes bench launch Chromium: the system's (Debian
 * `chromium`, or CHROMIUM_PATH), without the sandbox containers lack, and without background traffic.
 */
export const chromiumLaunchOptions = {
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
};
