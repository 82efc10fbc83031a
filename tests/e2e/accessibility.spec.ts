import { randomBytes } from 'node:crypto';
import AxeBuilder from '@axe-core/playwright';
import type { Locator, Page } from '@playwright/test';
import { expect, test } from './support/fixtures.ts';
import { addCompetitor, deleteCompetitor, putNote } from './support/competitors.ts';
import { signIn } from './support/sign-in.ts';

/**
 * Accessibility (WCAG 2.1 A and AA, as axe-core checks it) of every screen, as the role that sees the
 * most of it, and with each SweetAlert2 dialog open; and keyboard-only use of the notes dialog.
 *
 * A violation fails the test with one line per element: rule, impact, selector and what the rule asks.
 * Nothing is excluded: SweetAlert2's dialogs pass too (their focus rings and field edges are set in
 * web/styles/app.css).
 */

const wcagTags = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

async function expectNoViolations(page: Page, screen: string): Promise<void> {
  // A page as it stays, not mid-animation: SweetAlert2 fades a dialog in, and axe measuring its buttons
  // while half transparent found their contrast at 3.6:1 (1 run in 5 at stop 26's code, 4 in 5 on a quiet
  // machine). Endless animations (a spinner) are not waited for.
  await page.waitForFunction(() =>
    document
      .getAnimations()
      .every((a) => a.playState !== 'running' || a.effect?.getComputedTiming().endTime === Infinity),
  );
  // Run time: only violations are collected (not passes and "needs review"), and axe runs in the page
  // itself instead of merging frame results in a blank page of its own ("legacy mode"; the app has no
  // iframes for the other mode to reach).
  const { violations } = await new AxeBuilder({ page })
    .withTags(wcagTags)
    .options({ resultTypes: ['violations'] })
    .setLegacyMode(true)
    .analyze();
  const lines: string[] = [];
  for (const v of violations) {
    for (const node of v.nodes) {
      const selector = node.target.map(String).join(' ');
      lines.push(
        `  ${v.id} (${v.impact ?? 'unknown'}) at ${selector}: ${v.help}\n    ${node.failureSummary ?? ''}`,
      );
    }
  }
  // Soft: one run lists the violations of every screen, not only of the first.
  expect
    .soft(lines, `${screen}: ${lines.length} accessibility violation(s):\n${lines.join('\n')}`)
    .toEqual([]);
}

async function gotoReady(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
}

/** Presses Tab until `target` has focus (at most `limit` times): reaching it is part of what is tested. */
async function tabTo(page: Page, target: Locator, limit = 80): Promise<void> {
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Tab');
    if (await target.evaluate((el) => el === document.activeElement)) return;
  }
  throw new Error(`Tab never reached ${target.toString()}`);
}

/** Signs in as the admin, adds a throwaway competitor and opens the table showing only it. */
async function tableOfThrowaway(page: Page, baseUrl: string, prefix: string) {
  await signIn(page, baseUrl);
  const name = `${prefix} ${randomBytes(4).toString('hex')}`;
  const id = await addCompetitor(page, baseUrl, name);
  await gotoReady(page, `${baseUrl}/competitors?search=${encodeURIComponent(name)}`);
  return { id, name };
}

const utcInput = (at: Date) => at.toISOString().slice(0, 19);

test.describe.configure({ timeout: 90_000 });

// Every screen as the role that sees the most of it (the admin; the 403 page as a viewer), in three tests
// so that each stays well inside its time limit on a busy machine.
test('the sign-in page, also with its error, has no WCAG 2.1 A/AA violations', async ({ page, server }) => {
  const url = server.url;
  await gotoReady(page, `${url}/login`);
  await expectNoViolations(page, '/login');
  // A failed sign-in shows its error on the same form.
  await page.getByLabel('Email').fill('nobody@rivals.test');
  await page.getByLabel('Password').fill('not-the-password-0123');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert')).toBeVisible();
  await expectNoViolations(page, '/login with an error');
});

test('the competitor screens, with data, empty, with errors and as of a moment, have no WCAG 2.1 A/AA violations', async ({
  page,
  server,
}) => {
  const url = server.url;
  await signIn(page, url);
  const name = `A11y ${randomBytes(4).toString('hex')}`;
  const id = await addCompetitor(page, url, name);
  await putNote(page, url, id, 'pricing', 'Per seat, $40 a month.');
  await putNote(page, url, id, 'pricing', 'Per seat, $45 a month from March.');
  await putNote(page, url, id, 'strengths', 'Fast onboarding.');

  await gotoReady(page, `${url}/competitors`);
  await expectNoViolations(page, '/competitors');
  await gotoReady(page, `${url}/competitors?search=no-such-competitor-anywhere`);
  await expect(page.getByText('Clear search')).toBeVisible();
  await expectNoViolations(page, '/competitors with an empty search result');

  await gotoReady(page, `${url}/competitors/new`);
  await expectNoViolations(page, '/competitors/new');
  // The form again with its errors shown.
  await page.getByLabel('Website').fill('not a web address');
  await page.getByRole('button', { name: 'Add competitor' }).click();
  await expect(page.locator('#field-website-error')).toBeVisible();
  await expectNoViolations(page, '/competitors/new with errors');

  await gotoReady(page, `${url}/competitors/${id}/edit`);
  await expectNoViolations(page, '/competitors/:id/edit');
  await gotoReady(page, `${url}/competitors/${id}`);
  await expectNoViolations(page, '/competitors/:id (battlecard)');

  await gotoReady(page, `${url}/competitors/${id}/history`);
  await expect(page.locator('[data-history-count]')).toBeVisible();
  await expectNoViolations(page, '/competitors/:id/history');
  await gotoReady(page, `${url}/competitors/${id}/history?asOf=${utcInput(new Date())}`);
  await expect(page.locator('.as-of')).toBeVisible();
  await expectNoViolations(page, '/competitors/:id/history as of now');

  await deleteCompetitor(page, url, id);
});

test('ranking, segments, audit, users, ops and the 404 and 403 pages have no WCAG 2.1 A/AA violations', async ({
  page,
  browser,
  server,
}) => {
  const url = server.url;
  await signIn(page, url);
  for (const path of ['/ranking', '/segments', '/audit', '/users', '/users/new', '/ops']) {
    await gotoReady(page, `${url}${path}`);
    await expectNoViolations(page, path);
  }

  await page.goto(`${url}/no-such-page`);
  await expect(page.locator('.error-page')).toBeVisible();
  await expectNoViolations(page, '404 page');

  // A viewer, through the real form, for the 403 page.
  const email = `a11y-viewer-${randomBytes(4).toString('hex')}@rivals.test`;
  const password = 'a11y-viewer-password-0123';
  await gotoReady(page, `${url}/users/new`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Name').fill('A11y Viewer');
  await page.getByLabel('Role').selectOption('viewer');
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Add user' }).click();
  await expect(page).toHaveURL(`${url}/users`);
  const context = await browser.newContext();
  try {
    const viewer = await context.newPage();
    await signIn(viewer, url, email, password);
    const response = await viewer.goto(`${url}/users`);
    expect(response?.status()).toBe(403);
    await expectNoViolations(viewer, '403 page (a viewer on /users)');
  } finally {
    await context.close();
  }
});

/** What sticks out past the viewport's right edge, outside the boxes made to scroll sideways. */
async function sideways(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const out = [...document.querySelectorAll('body *')].filter(
      (el) =>
        el.getBoundingClientRect().right > width + 1 && !el.closest('.scroll-region, .data-table__scroll'),
    );
    const page =
      document.documentElement.scrollWidth > width
        ? [`the page is ${document.documentElement.scrollWidth}px wide`]
        : [];
    return [
      ...page,
      ...out
        .slice(0, 5)
        .map(
          (el) => `${el.tagName.toLowerCase()}.${el.className}: ${el.textContent?.trim().slice(0, 40) ?? ''}`,
        ),
    ];
  });
}

// WCAG 1.4.10 (Reflow): at 320 CSS pixels, a phone held upright, nothing needs scrolling sideways but
// the wide tables, each in its own scrolling box. The header's links used to run off the edge (Users and
// Operations could not be reached), and /ops's facts and tables widened the whole page.
test("at a phone's width every screen fits, with a 114-letter name: header links in view, only wide tables scroll sideways", async ({
  page,
  server,
}) => {
  const url = server.url;
  await page.setViewportSize({ width: 320, height: 800 });
  await gotoReady(page, `${url}/login`);
  expect(await sideways(page), '/login').toEqual([]);
  await signIn(page, url);
  // A name as long as a name may be, without a space to break at (names are the users' text).
  const id = await addCompetitor(page, url, `Reflow${'Wide'.repeat(25)}${randomBytes(4).toString('hex')}`);
  const screens = [
    '/competitors',
    '/competitors/new',
    `/competitors/${id}`,
    `/competitors/${id}/edit`,
    `/competitors/${id}/history`,
    '/ranking',
    '/segments',
    '/audit',
    '/users',
    '/users/new',
    '/ops',
  ];
  for (const path of screens) {
    await gotoReady(page, `${url}${path}`);
    expect.soft(await sideways(page), path).toEqual([]);
    for (const link of await page.locator('.site-header nav a').all()) {
      const box = await link.boundingBox();
      expect
        .soft(
          box && box.x >= 0 && box.x + box.width <= 320,
          `${path}: header link ${await link.textContent()} in view`,
        )
        .toBe(true);
    }
  }
  // A scrolling box takes focus (a keyboard can scroll it) and is named: axe checks both.
  await gotoReady(page, `${url}/ops`);
  await expectNoViolations(page, '/ops at 320 px');
  await deleteCompetitor(page, url, id);
});

test('the notes dialog and the delete confirmation have no WCAG 2.1 A/AA violations', async ({
  page,
  server,
}) => {
  const { id, name } = await tableOfThrowaway(page, server.url, 'A11y Dialog');
  const dialog = page.getByRole('dialog');

  const opener = page.getByRole('button', { name: `Pricing note (empty) for ${name}`, exact: true });
  await opener.click();
  await expect(dialog.locator('textarea')).toBeFocused();
  await expectNoViolations(page, 'notes dialog');
  // The page behind is inert, not only hidden from screen readers: nothing there takes focus.
  const behind = await page.evaluate(() => {
    const container = document.querySelector('.swal2-container');
    const others = Array.from(document.body.children).filter((e) => e !== container);
    const link = others.flatMap((e) => Array.from(e.querySelectorAll<HTMLElement>('a[href]')))[0];
    link?.focus();
    return {
      inert: others.every((e) => (e as HTMLElement).inert),
      count: others.length,
      tried: link !== undefined,
      focusLeftDialog: !container?.contains(document.activeElement),
    };
  });
  expect(behind).toEqual({ inert: true, count: behind.count, tried: true, focusLeftDialog: false });
  expect(behind.count).toBeGreaterThan(0);
  // With its validation message shown.
  await dialog.getByRole('button', { name: 'Save', exact: true }).click();
  await expect(dialog.locator('.swal2-validation-message')).toHaveText('Value is required!');
  await expectNoViolations(page, 'notes dialog with "Value is required!"');
  await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();
  await expect(dialog).toBeHidden();
  // Closed, the page is whole again, and focus is back on the button that opened the dialog.
  await expect(opener).toBeFocused();
  expect(await page.evaluate(() => document.querySelectorAll('[inert]').length)).toBe(0);

  await page.getByRole('button', { name: `Delete ${name}`, exact: true }).click();
  await expect(dialog).toContainText('Are you sure?');
  await expectNoViolations(page, 'delete confirmation');
  await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();
  await expect(dialog).toBeHidden();

  // The battlecard opens the same dialog from its own buttons.
  await gotoReady(page, `${server.url}/competitors/${id}`);
  await page.getByRole('button', { name: 'Edit general note', exact: true }).click();
  await expect(dialog.locator('textarea')).toBeVisible();
  await expectNoViolations(page, 'notes dialog on the battlecard');
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();

  await deleteCompetitor(page, server.url, id);
});

test('keyboard only: open a note from the table, type, save; focus returns; Escape closes an idle dialog', async ({
  page,
  server,
}) => {
  const { id } = await tableOfThrowaway(page, server.url, 'A11y Keys');
  const dialog = page.getByRole('dialog');
  const textarea = dialog.locator('textarea');
  const pricing = page.locator(`tr[data-row-id="${id}"] button[data-note][data-column="pricing"]`);

  // Escape closes an idle dialog, and focus goes back to the button that opened it.
  await tabTo(page, pricing);
  await page.keyboard.press('Enter');
  await expect(textarea).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect(pricing).toBeFocused();

  // Open with Space, type, Tab to Save, save with Enter.
  await page.keyboard.press('Space');
  await expect(textarea).toBeFocused();
  await page.keyboard.type('Typed with the keyboard only.');
  await page.keyboard.press('Tab');
  const save = dialog.getByRole('button', { name: 'Save', exact: true });
  await expect(save).toBeFocused();
  // The app's focus ring (dark inner ring, 15:1 on white), not SweetAlert2's pale one (about 2:1).
  await expect(save).toHaveCSS('box-shadow', /rgb\(29, 35, 48\) 0px 0px 0px 2px/);
  await page.keyboard.press('Enter');
  await expect(dialog).toBeHidden();
  await expect(pricing).toHaveAttribute('data-value', 'Typed with the keyboard only.');
  // The row was refreshed with the saved note; focus is on its (new) Pricing button, not lost to the page.
  await expect(pricing).toBeFocused();

  // Escape on the battlecard's dialog too.
  await gotoReady(page, `${server.url}/competitors/${id}`);
  const edit = page.getByRole('button', { name: 'Edit pricing note', exact: true });
  await tabTo(page, edit);
  await page.keyboard.press('Enter');
  await expect(textarea).toHaveValue('Typed with the keyboard only.');
  await expect(textarea).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect(edit).toBeFocused();

  await deleteCompetitor(page, server.url, id);
});
