import { expect, type Page } from '@playwright/test';
import { compareMarks, markOf } from '#web/realtime/live-mark.ts';

/** A component answer's change (its last event), as the page's live mark names it (live-mark.ts). */
export interface AnsweredChange {
  transactionId?: string;
  position: number | null;
}

/**
 * Waits until the page has handled the live message of an answered change: the page records the mark
 * of each message once it has decided what to do about it (`data-live-position`).
 */
export async function waitForLiveMark(page: Page, answer: AnsweredChange): Promise<void> {
  const target = markOf({ transactionId: answer.transactionId ?? '0', position: answer.position ?? 0 });
  await expect
    .poll(async () =>
      compareMarks(await page.evaluate(() => document.documentElement.dataset.livePosition ?? '0:0'), target),
    )
    .toBeGreaterThanOrEqual(0);
}
