import type { Page } from '@playwright/test';

type Trapped = Window & { __xssHits?: number; __reportXss?: (where: string) => Promise<void> };

/**
 * Arms a page before any of its scripts run: assigning `window.__xss` (what every test payload does),
 * calling `alert`, or opening a dialog counts as an execution, reported back to the test.
 */
export async function trapXss(
  page: Page,
): Promise<{ hits: () => Promise<number>; reported: string[]; dialogs: string[] }> {
  const reported: string[] = [];
  const dialogs: string[] = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await page.exposeFunction('__reportXss', (where: string) => {
    reported.push(where);
  });
  await page.addInitScript(() => {
    const w = window as Trapped;
    const hit = (how: string) => {
      w.__xssHits = (w.__xssHits ?? 0) + 1;
      void w.__reportXss?.(`${how} at ${location.href}`);
    };
    Object.defineProperty(window, '__xss', {
      configurable: false,
      get: () => undefined,
      set: () => hit('__xss'),
    });
    window.alert = () => hit('alert');
  });
  return { hits: () => page.evaluate(() => (window as Trapped).__xssHits ?? 0), reported, dialogs };
}
