import { expect, type Page } from '@playwright/test';

/** Chromium's answer to a command sent while the tab is between two documents. */
const BETWEEN_DOCUMENTS = 'Not attached to an active page';

/**
 * The user's reload of Chromium's connection-error page, which posts the form again. The page's URL
 * turns to `chrome-error:` when the error page commits, a moment before Chromium has made it the tab's
 * document; a reload sent in that moment is refused ("Not attached to an active page", seen once on
 * CI) without reaching any page, so nothing was posted: it is sent again then, and only then.
 */
export async function reloadTheErrorPage(page: Page): Promise<void> {
  await expect.poll(() => page.url()).toMatch(/^chrome-error:/);
  await page.waitForLoadState('load');
  for (let attempt = 1; ; attempt += 1) {
    try {
      await page.reload();
      return;
    } catch (error) {
      if (attempt === 5 || !(error instanceof Error && error.message.includes(BETWEEN_DOCUMENTS)))
        throw error;
      await page.waitForTimeout(200);
    }
  }
}
