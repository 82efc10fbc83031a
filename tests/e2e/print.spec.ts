import { expect, test } from './support/fixtures.ts';
import { signIn } from './support/sign-in.ts';

type Printed = Window & { __printedBody?: string; __printed?: number };

test('printing shows only the battlecard, opens the print dialog, restores the page, then reloads', async ({
  page,
  server,
}) => {
  // window.print blocks in a real browser; record what the page looked like when it was called instead.
  await page.addInitScript(() => {
    const w = window as Printed;
    w.print = () => {
      w.__printedBody = document.body.innerText;
      w.__printed = (w.__printed ?? 0) + 1;
      sessionStorage.setItem('printedBody', document.body.innerText);
    };
  });
  await signIn(page, server.url);
  await page.getByRole('link', { name: 'Northwind Analytics', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Northwind Analytics' })).toBeVisible();
  await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
  await page.evaluate(() => ((window as Printed & { __beforeReload?: boolean }).__beforeReload = true));

  const reloaded = page.waitForEvent('load');
  await page.getByRole('button', { name: 'Print battlecard' }).click();
  await reloaded;

  // What was on the page while printing: the battlecard's content, without the navigation or buttons.
  const printed = await page.evaluate(() => sessionStorage.getItem('printedBody') ?? '');
  expect(printed).toContain('Strengths');
  expect(printed).toContain('Deep Salesforce integration');
  expect(printed).not.toContain('Sign out');
  expect(printed).not.toContain('Print battlecard');
  // Then the page came back and was reloaded (a fresh document: our marker is gone).
  expect(await page.evaluate(() => (window as { __beforeReload?: boolean }).__beforeReload)).toBeUndefined();
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
});

test('without JavaScript the battlecard offers no Print button that would do nothing (helper-72)', async ({
  browser,
  server,
}) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  try {
    const page = await context.newPage();
    await signIn(page, server.url);
    await page.getByRole('link', { name: 'Northwind Analytics', exact: true }).click();
    await expect(page.getByRole('heading', { level: 1, name: 'Northwind Analytics' })).toBeVisible();
    // The card's other actions are still there; only the one that needs a script is not.
    await expect(page.getByRole('link', { name: 'History' })).toBeVisible();
    await expect(page.getByRole('button', { name: 'Print battlecard' })).toBeHidden();
  } finally {
    await context.close();
  }
});
