import { randomBytes } from 'node:crypto';
import type { Browser, BrowserContext, Locator, Page } from '@playwright/test';
import { expect, test } from './support/fixtures.ts';
import { addCompetitor, deleteCompetitor, putNote } from './support/competitors.ts';
import { expectNoViolations } from './support/axe.ts';
import { signIn } from './support/sign-in.ts';
import { addUser, type Role } from './support/users.ts';
import { startServer, TEST_ADMIN_EMAIL } from './support/server.ts';

/**
 * Accessibility (WCAG 2.0 and 2.1, A and AA, as axe-core checks it) of every screen each role reaches
 * (admin, editor, viewer; the 403 page where one does not), at 1280 and 375 px, in the states worth
 * checking (empty, with rows, searched, sorted, a deep page, forms with errors, as of a moment), and
 * with each SweetAlert2 dialog open; keyboard-only use of the notes dialog; reflow at 320 px.
 *
 * A violation fails the test with one line per element: rule, impact, selector and what the rule asks.
 * Serious and critical ones always; moderate and minor ones unless `excusedRules` (support/axe.ts)
 * names the rule with a reason (none is). SweetAlert2's dialogs pass too (their focus rings and field
 * edges are set in web/styles/app.css).
 */

async function gotoReady(page: Page, url: string, status = 200): Promise<void> {
  const response = await page.goto(url);
  expect(response?.status(), url).toBe(status);
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

/** A user of `role` for these screens: "A11y viewer", and so on. */
const a11yUser = (role: Role) => ({
  name: `A11y ${role}`,
  role,
  emailPrefix: `a11y-${role}`,
  password: `a11y-${role}-password-0123`,
});

/** Signs in as `role` in a context of its own (the admin is the server's own; others are added). */
async function signedIn(
  browser: Browser,
  baseUrl: string,
  role: Role,
  width: number,
): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, timezoneId: 'UTC' });
  const page = await context.newPage();
  await signIn(page, baseUrl);
  if (role !== 'admin') {
    const { email, password } = await addUser(page, baseUrl, a11yUser(role));
    await context.clearCookies();
    await signIn(page, baseUrl, email, password);
  }
  return context;
}

/** Enough rows for a third page of ten, all named with one prefix (added once per worker). */
const ROW_PREFIX = 'A11y Row';
let rowsAdded = false;
async function addRows(page: Page, baseUrl: string): Promise<string> {
  const tag = randomBytes(3).toString('hex');
  let first = '';
  if (!rowsAdded) {
    for (let i = 0; i < 24; i++) {
      const id = await addCompetitor(page, baseUrl, `${ROW_PREFIX} ${String(i).padStart(2, '0')} ${tag}`);
      first ||= id;
    }
    rowsAdded = true;
  } else {
    first = await addCompetitor(page, baseUrl, `${ROW_PREFIX} extra ${tag}`);
  }
  return first;
}

interface Screen {
  name: string;
  path: string;
  status?: number;
  /** Brings the page into the state checked (after it loaded); expects what shows it is there. */
  then?: (page: Page) => Promise<void>;
}

const showsFieldErrors = async (page: Page, submit: string) => {
  await page.getByLabel('Website').fill('not a web address');
  await page.getByLabel('Name').fill('');
  await page.getByRole('button', { name: submit }).click();
  await expect(page.locator('#field-website-error')).toBeVisible();
};

/** Every screen each role reaches (and the 403 of those it does not), in the states worth checking. */
function screensOf(role: Role, id: string): Screen[] {
  const search = encodeURIComponent(ROW_PREFIX);
  const list: Screen[] = [
    { name: 'competitors', path: '/competitors' },
    { name: 'competitors searched', path: `/competitors?search=${search}` },
    {
      name: 'competitors with no search result',
      path: '/competitors?search=no-such-competitor-anywhere',
      then: (page) => expect(page.getByText('Clear search')).toBeVisible(),
    },
    { name: 'competitors sorted by threat, descending', path: '/competitors?sort=threat:desc' },
    {
      name: 'competitors sorted by a header click',
      path: `/competitors?search=${search}`,
      then: async (page) => {
        await page.locator('[data-sort-button="name"]').click();
        // The rank column (the default order) reads ascending before the click: wait for the name column.
        await expect(page.locator('th[aria-sort="ascending"]:has([data-sort-button="name"])')).toBeVisible();
      },
    },
    { name: 'competitors, page 3 of 10 a page', path: `/competitors?search=${search}&perPage=10&page=3` },
    {
      name: 'competitors searched from the box',
      path: '/competitors',
      then: async (page) => {
        await page.getByRole('searchbox').fill(ROW_PREFIX);
        await expect(page.locator('[data-table-region]')).toHaveAttribute('data-state', /A11y Row/);
      },
    },
    { name: 'battlecard', path: `/competitors/${id}` },
    { name: 'ranking', path: '/ranking' },
    { name: 'segments board', path: '/segments' },
    { name: '404 page', path: '/no-such-page', status: 404 },
    { name: 'your account', path: '/account' },
    {
      name: 'your account, a password change with errors',
      path: '/account',
      then: async (page) => {
        await page.getByLabel('New password', { exact: true }).fill('short');
        await page.getByRole('button', { name: 'Change password' }).click();
        await expect(page.locator('#field-currentPassword-error')).toBeVisible();
      },
    },
  ];
  const editor: Screen[] = [
    { name: 'add form', path: '/competitors/new' },
    {
      name: 'add form with errors',
      path: '/competitors/new',
      then: (page) => showsFieldErrors(page, 'Add competitor'),
    },
    { name: 'edit form', path: `/competitors/${id}/edit` },
    {
      name: 'edit form with errors',
      path: `/competitors/${id}/edit`,
      then: (page) => showsFieldErrors(page, 'Save changes'),
    },
    { name: 'history', path: `/competitors/${id}/history` },
    { name: 'history as of now', path: `/competitors/${id}/history?asOf=${utcInput(new Date())}` },
    { name: 'audit log', path: '/audit' },
  ];
  const admin: Screen[] = [
    { name: 'users', path: '/users' },
    { name: 'add user form', path: '/users/new' },
    {
      name: "set a user's password form",
      path: '/users',
      // The users list may hold only the admin, whose own row has no such link: a user is added first.
      then: async (page) => {
        const base = new URL(page.url()).origin;
        const { email } = await addUser(page, base, a11yUser('viewer'));
        await gotoReady(page, `${base}/users?search=${encodeURIComponent(email)}`);
        await page.getByRole('link', { name: 'Set password of A11y viewer' }).click();
        await expect(page.getByRole('heading', { name: 'Set a password for A11y viewer' })).toBeVisible();
      },
    },
    { name: 'ops', path: '/ops' },
  ];
  const forbidden = (screens: Screen[]) =>
    screens.map(({ name, path }) => ({ name: `403 instead of ${name}`, path, status: 403 }));
  if (role === 'admin') return [...list, ...editor, ...admin];
  if (role === 'editor') return [...list, ...editor, ...forbidden(admin.filter((s) => !s.then))];
  return [...list, ...forbidden([...editor, ...admin].filter((s) => !s.then))];
}

test.describe.configure({ timeout: 300_000 });

for (const width of [1280, 375]) {
  test(`at ${width} px the sign-in page, fresh and after a wrong password, has no WCAG 2.1 A/AA violations`, async ({
    page,
    server,
  }) => {
    await page.setViewportSize({ width, height: 900 });
    await gotoReady(page, `${server.url}/login`);
    await expectNoViolations(page, '/login');
    await page.getByLabel('Email').fill(TEST_ADMIN_EMAIL);
    await page.getByLabel('Password').fill('not-the-password-0123');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert')).toBeVisible();
    await expectNoViolations(page, '/login after a wrong password');
  });

  for (const role of ['admin', 'editor', 'viewer'] as const) {
    test(`at ${width} px every screen ${role === 'viewer' ? 'a' : 'an'} ${role} reaches has no WCAG 2.1 A/AA violations`, async ({
      browser,
      server,
    }) => {
      const url = server.url;
      const setup = await signedIn(browser, url, 'admin', width);
      const admin = setup.pages()[0] as Page;
      const id = await addRows(admin, url);
      await putNote(admin, url, id, 'pricing', 'Per seat, $40 a month.');
      await putNote(admin, url, id, 'pricing', 'Per seat, $45 a month from March.');
      await putNote(admin, url, id, 'strengths', 'Fast onboarding.');
      const context = role === 'admin' ? setup : await signedIn(browser, url, role, width);
      try {
        const page = context.pages()[0] as Page;
        for (const screen of screensOf(role, id)) {
          await gotoReady(page, `${url}${screen.path}`, screen.status);
          await screen.then?.(page);
          await expectNoViolations(page, `${role} at ${width} px, ${screen.name} (${screen.path})`);
        }
      } finally {
        await context.close();
        await setup.close();
      }
    });
  }
}

// A new install without demo data: the empty states of the list, the ranking and the board.
test('with no competitor at all, the empty list, ranking and board have no WCAG 2.1 A/AA violations', async ({
  page,
}) => {
  const empty = await startServer({ env: { DEMO_DATA: 'false' } });
  try {
    await signIn(page, empty.url);
    for (const width of [1280, 375]) {
      await page.setViewportSize({ width, height: 900 });
      for (const path of ['/competitors', '/ranking', '/segments']) {
        await gotoReady(page, `${empty.url}${path}`);
        if (path !== '/segments') await expect(page.getByText('No competitors yet.')).toBeVisible();
        await expectNoViolations(page, `${path} with no competitor at ${width} px`);
      }
    }
  } finally {
    await empty.stop();
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
    '/account',
  ];
  for (const path of screens) {
    await gotoReady(page, `${url}${path}`);
    // The lists' script hides their move buttons (the form without JavaScript, checked below) once it
    // has loaded, after the page says it is ready.
    if (path === '/ranking' || path === '/segments')
      await expect(page.locator('[data-sortable][data-enhanced]')).toBeAttached();
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

for (const width of [1280, 375])
  test(`at ${width} px the notes dialog and the delete confirmation have no WCAG 2.1 A/AA violations`, async ({
    page,
    server,
  }) => {
    await page.setViewportSize({ width, height: 900 });
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
    // After typing, Escape asks before the typing is gone.
    await dialog.locator('textarea').fill('Typed, then Escape');
    await page.keyboard.press('Escape');
    await expect(dialog).toContainText('Discard your changes?');
    await expectNoViolations(page, 'the question before discarding a typed note');
    await dialog.getByRole('button', { name: 'Discard', exact: true }).click();
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

/** The focused element's outline, as drawn: forced colours drop every box-shadow and keep outlines. */
const focusOutline = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement;
    if (!el) return 'nothing focused';
    const c = getComputedStyle(el);
    return `${el.tagName.toLowerCase()} "${el.textContent?.trim() ?? ''}": outline ${c.outlineStyle} ${c.outlineWidth}`;
  });

// WCAG 2.4.7 with forced colours (Windows' contrast themes): box-shadows are not drawn there, and
// SweetAlert2 sets `outline: none` on its buttons and fields, so the dialogs' only focus ring (a
// box-shadow) vanished: Tab moved through the notes and delete dialogs with nothing showing where.
test('with forced colours every control of the notes and delete dialogs shows its focus', async ({
  page,
  server,
}) => {
  await page.emulateMedia({ forcedColors: 'active' });
  const { id, name } = await tableOfThrowaway(page, server.url, 'A11y Forced');
  const dialog = page.getByRole('dialog');
  const rings: string[] = [];
  const walk = async (count: number) => {
    for (let i = 0; i < count; i++) {
      rings.push(await focusOutline(page));
      await page.keyboard.press('Tab');
    }
  };

  const pricing = page.locator(`tr[data-row-id="${id}"] button[data-note][data-column="pricing"]`);
  await pricing.focus();
  rings.push(await focusOutline(page));
  await page.keyboard.press('Enter');
  await expect(dialog.locator('textarea')).toBeFocused();
  await walk(3); // the note, Save, Cancel
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  // SweetAlert2 gives focus back to the opener as it finishes closing; on a busy machine that came after
  // the next dialog had opened, and took the focus from its Cancel.
  await expect(pricing).toBeFocused();

  await page.getByRole('button', { name: `Delete ${name}`, exact: true }).focus();
  await page.keyboard.press('Enter');
  await expect(dialog.getByRole('button', { name: 'Cancel' })).toBeFocused();
  await walk(2); // Cancel, "Yes, delete it!"
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();

  expect(rings.filter((ring) => !/outline solid [2-9]px/.test(ring))).toEqual([]);
  expect(rings).toHaveLength(6);
  await deleteCompetitor(page, server.url, id);
});
