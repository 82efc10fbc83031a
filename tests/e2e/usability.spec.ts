import { randomBytes } from 'node:crypto';
import type { Page } from '@playwright/test';
import { addCompetitor, deleteCompetitor } from './support/competitors.ts';
import { expect, test } from './support/fixtures.ts';
import { TEST_ADMIN_EMAIL, TEST_ADMIN_PASSWORD } from './support/server.ts';
import { signIn } from './support/sign-in.ts';

/* What a new user meets on a desktop screen, walked through as a user would (helper-26's review). */

async function gotoReady(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
}

/** Signs this browser out from a second tab, as a user would, while `page` keeps its form open. */
async function signOutInAnotherTab(page: Page, url: string): Promise<void> {
  const other = await page.context().newPage();
  await other.goto(`${url}/competitors`);
  await other.getByRole('button', { name: 'Sign out' }).click();
  await expect(other).toHaveURL(/\/login/);
  await other.close();
}

/** From the 401 page a refused send shows: its "Sign in" link, then the sign-in form. */
async function signInAgainFromThe401(page: Page): Promise<void> {
  await expect(page.getByRole('heading', { name: 'Please sign in' })).toBeVisible();
  await page.getByRole('link', { name: 'Sign in' }).click();
  await page.getByLabel('Email').fill(TEST_ADMIN_EMAIL);
  await page.getByLabel('Password').fill(TEST_ADMIN_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

test.describe('usability at a desktop width', () => {
  test.use({ viewport: { width: 1280, height: 900 } });

  test('a name of 120 characters fits the form however many UTF-16 units its letters take (decision 0024)', async ({
    page,
    server,
  }) => {
    await signIn(page, server.url);
    await gotoReady(page, `${server.url}/competitors/new`);
    // 116 foxes and " Lab": 120 characters as the server counts them (code points), 236 UTF-16 units,
    // the measure a browser's maxlength uses.
    const name = `${'🦊'.repeat(116)} Lab`;
    const headquarters = `${'𝔏'.repeat(110)} City`;
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('Headquarters').fill(headquarters);
    await expect(page.getByLabel('Name')).toHaveValue(name);
    await expect(page.getByLabel('Headquarters')).toHaveValue(headquarters);
    await page.getByLabel('Segment').selectOption('smb');
    await page.getByRole('button', { name: 'Add competitor' }).click();
    await expect(page.getByRole('heading', { name })).toBeVisible();

    // One more character is the server's to refuse, with its message and the whole text kept.
    await gotoReady(page, `${server.url}/competitors/new`);
    await page.getByLabel('Name').fill(`${'🦊'.repeat(117)} Lab`);
    await page.getByLabel('Segment').selectOption('smb');
    await page.getByRole('button', { name: 'Add competitor' }).click();
    await expect(page.getByText('Name must be at most 120 characters.')).toBeVisible();
    await expect(page.getByLabel('Name')).toHaveValue(`${'🦊'.repeat(117)} Lab`);

    // A display name of 80 characters, as the add-user form says.
    await gotoReady(page, `${server.url}/users/new`);
    const displayName = `${'🙂'.repeat(76)} Ana`;
    await page.getByLabel('Name', { exact: true }).fill(displayName);
    await expect(page.getByLabel('Name', { exact: true })).toHaveValue(displayName);
  });

  test('a form shown again with errors puts the cursor in the first field in error, not in one that was fine', async ({
    page,
    server,
  }) => {
    await signIn(page, server.url);

    // Add competitor: the name is fine, the website and the segment are not.
    await gotoReady(page, `${server.url}/competitors/new`);
    await expect(page.getByLabel('Name')).toBeFocused();
    await page.getByLabel('Name').fill('Usability Focus Co');
    await page.getByLabel('Website').fill('not a url');
    await page.getByRole('button', { name: 'Add competitor' }).click();
    await expect(page.getByText('Website must be an http:// or https:// address.')).toBeVisible();
    await expect(page.getByLabel('Website')).toBeFocused();
    await expect(page.getByLabel('Website')).toHaveValue('not a url');
    await expect(page.getByLabel('Name')).toHaveValue('Usability Focus Co');

    // Only the segment is missing now: the cursor goes there.
    await page.getByLabel('Website').fill('https://focus.example.com');
    await page.getByRole('button', { name: 'Add competitor' }).click();
    await expect(page.getByText('Choose a segment.')).toBeVisible();
    await expect(page.getByLabel('Segment')).toBeFocused();

    // Add user: the email is wrong (the cursor goes there), then only the password is.
    await gotoReady(page, `${server.url}/users/new`);
    await page.getByLabel('Email').fill('not-an-email');
    await page.getByLabel('Name').fill('Focus Person');
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Add user' }).click();
    await expect(page.getByText('Enter a valid email address.')).toBeVisible();
    await expect(page.getByLabel('Email')).toBeFocused();
    await page.getByLabel('Email').fill('focus.person@rivals.test');
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Add user' }).click();
    await expect(page.getByText('Password must be at least 12 characters.')).toBeVisible();
    await expect(page.getByLabel('Password')).toBeFocused();
  });

  test('the search box has one clear button: the browser’s own × is not shown beside "Clear search"', async ({
    page,
    server,
  }) => {
    await signIn(page, server.url);
    await gotoReady(page, `${server.url}/competitors`);
    const search = page.getByRole('searchbox');
    await search.fill('North');
    await expect(page.getByRole('button', { name: 'Clear search' })).toHaveCount(1);
    // Chromium draws its own cancel × at the right end of a focused, non-empty type=search input, just left
    // of our "Clear search": a click there cleared the search. Now that spot is only the text box.
    const box = await search.boundingBox();
    if (!box) throw new Error('the search box is not on screen');
    await page.mouse.click(box.x + box.width - 16, box.y + box.height / 2);
    await expect(search).toBeFocused();
    await page.waitForTimeout(500);
    await expect(search).toHaveValue('North');
  });

  test('deleting a competitor from a searched, sorted table comes back to that table, not to page 1 of everything', async ({
    page,
    server,
  }) => {
    await signIn(page, server.url);
    for (const n of [1, 2, 3]) await addCompetitor(page, server.url, `Usability Delete ${n}`);
    await gotoReady(
      page,
      `${server.url}/competitors?search=Usability+Delete&sort=name%3Adesc&page=1&perPage=10`,
    );
    const rows = page.locator('tr[data-row-id]');
    await expect(rows).toHaveCount(3);

    await page.getByRole('button', { name: 'Delete Usability Delete 2' }).click();
    await page.getByRole('button', { name: 'Yes, delete it!' }).click();

    await expect(page.getByText('Usability Delete 2 was deleted.')).toBeVisible();
    const url = new URL(page.url());
    expect(url.pathname).toBe('/competitors');
    expect(url.searchParams.get('search')).toBe('Usability Delete');
    expect(url.searchParams.get('sort')).toBe('name:desc');
    expect(url.searchParams.get('perPage')).toBe('10');
    await expect(page.getByRole('searchbox')).toHaveValue('Usability Delete');
    await expect(rows).toHaveCount(2);
    await expect(rows.first()).toContainText('Usability Delete 3');
  });

  test('the delete dialog puts focus on Cancel: a second Enter does not delete, choosing "Yes, delete it!" does', async ({
    page,
    server,
  }) => {
    await signIn(page, server.url);
    const name = `Keyboard Delete ${randomBytes(2).toString('hex')}`;
    await addCompetitor(page, server.url, name);
    await gotoReady(page, `${server.url}/competitors?search=${encodeURIComponent(name)}`);
    const rows = page.locator('tr[data-row-id]');
    await expect(rows).toHaveCount(1);
    const dialog = page.getByRole('dialog');

    // Enter on "Delete", then Enter again (a double press, or a user who expects a second "are you sure"):
    // the irreversible action is not what the second Enter does.
    await page.getByRole('button', { name: `Delete ${name}` }).focus();
    await page.keyboard.press('Enter');
    await expect(dialog).toBeVisible();
    await expect(dialog.getByRole('button', { name: 'Cancel' })).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(dialog).toBeHidden();
    await expect(page.getByRole('button', { name: `Delete ${name}` })).toBeFocused();
    await page.reload();
    await expect(rows).toHaveCount(1);

    // Deleting by keyboard is one deliberate step away: to "Yes, delete it!", then Enter.
    await page.getByRole('button', { name: `Delete ${name}` }).focus();
    await page.keyboard.press('Enter');
    await expect(dialog.getByRole('button', { name: 'Cancel' })).toBeFocused();
    await page.keyboard.press('Shift+Tab');
    await expect(dialog.getByRole('button', { name: 'Yes, delete it!' })).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(page.getByText(`${name} was deleted.`)).toBeVisible();
    await expect(rows).toHaveCount(0);
  });

  test('a form sent after signing out in another tab: the sign-in link leads back to that form, with what was typed', async ({
    page,
    server,
  }) => {
    await signIn(page, server.url);
    await gotoReady(page, `${server.url}/competitors/new`);
    await page.getByLabel('Name').fill('Typed While Signed Out');
    await signOutInAnotherTab(page, server.url);

    await page.getByLabel('Segment').selectOption('smb');
    await page.getByLabel('Threat').selectOption('high');
    await page.getByLabel('Headquarters').fill('Lisbon');
    await page.getByRole('button', { name: 'Add competitor' }).click();
    await signInAgainFromThe401(page);
    // Back on the form to repeat the change, as the message says, not on the table, with what was
    // typed put back and a word saying so.
    await expect(page).toHaveURL(`${server.url}/competitors/new`);
    await expect(page.getByRole('status')).toContainText('What you typed is back');
    await expect(page.getByLabel('Name')).toHaveValue('Typed While Signed Out');
    await expect(page.getByLabel('Segment')).toHaveValue('smb');
    await expect(page.getByLabel('Threat')).toHaveValue('high');
    await expect(page.getByLabel('Headquarters')).toHaveValue('Lisbon');
    await page.getByRole('button', { name: 'Add competitor' }).click();
    await expect(page.getByRole('heading', { name: 'Typed While Signed Out' })).toBeVisible();
    // Put back once: the form's page shown again is empty.
    await gotoReady(page, `${server.url}/competitors/new`);
    await expect(page.getByLabel('Name')).toHaveValue('');
    await expect(page.getByRole('status')).toHaveCount(0);
  });

  test('the add-user form sent after the session ended: what was typed comes back, but the password is never kept', async ({
    page,
    server,
  }) => {
    await signIn(page, server.url);
    await gotoReady(page, `${server.url}/users/new`);
    await page.getByLabel('Email').fill('unsent.user@rivals.test');
    await page.getByLabel('Name', { exact: true }).fill('Unsent User');
    await page.getByLabel('Role').selectOption('editor');
    await page.getByLabel('Password').fill('a-password-long-enough');
    await signOutInAnotherTab(page, server.url);

    await page.getByRole('button', { name: 'Add user' }).click();
    const kept = await page.evaluate(() => sessionStorage.getItem('rivals:unsent-form'));
    expect(kept).toContain('unsent.user@rivals.test');
    expect(kept).not.toContain('a-password-long-enough');
    await signInAgainFromThe401(page);
    await expect(page).toHaveURL(`${server.url}/users/new`);
    await expect(page.getByRole('status')).toContainText('Type the password again');
    await expect(page.getByLabel('Email')).toHaveValue('unsent.user@rivals.test');
    await expect(page.getByLabel('Name', { exact: true })).toHaveValue('Unsent User');
    await expect(page.getByLabel('Role')).toHaveValue('editor');
    await expect(page.getByLabel('Password')).toHaveValue('');
  });

  test('the sign-in form takes the typing at once: the email on arrival, the password after a refused attempt', async ({
    page,
    server,
  }) => {
    const focusedLabel = () =>
      page.evaluate(() => {
        const el = document.activeElement;
        return el?.id ? (document.querySelector(`label[for="${el.id}"]`)?.textContent ?? el.id) : el?.tagName;
      });
    await gotoReady(page, `${server.url}/login`);
    expect(await focusedLabel()).toBe('Email');

    // An unknown account (no lockout of the suite's admin): refused, the email kept, the password cleared.
    await page.keyboard.type('nobody@rivals.test');
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert')).toHaveText('Email or password is incorrect.');
    await expect(page.getByLabel('Email')).toHaveValue('nobody@rivals.test');
    expect(await focusedLabel()).toBe('Password');

    // So the next try is: fix the email if need be, or just type the password again and press Enter.
    await page.getByLabel('Email').fill(TEST_ADMIN_EMAIL);
    await page.getByLabel('Password').focus();
    await page.keyboard.type(TEST_ADMIN_PASSWORD);
    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(`${server.url}/competitors`);
  });
});

test.describe('a long name on the ranking and the board', () => {
  for (const width of [1280, 375]) {
    test(`wraps beside its grip at ${width} px, not on a line of its own`, async ({ page, server }) => {
      await page.setViewportSize({ width, height: 900 });
      await signIn(page, server.url);
      // 120 characters and no space: only a break anywhere lets it wrap.
      const name = `${'W'.repeat(116)}${randomBytes(2).toString('hex')}`;
      const id = await addCompetitor(page, server.url, name);
      try {
        for (const path of ['/ranking', '/segments']) {
          await gotoReady(page, `${server.url}${path}`);
          const item = page.locator(`.sortable-item[data-id="${id}"]`);
          await item.scrollIntoViewIfNeeded();
          const [grip, link, row] = await Promise.all([
            item.locator('[data-drag-handle]').boundingBox(),
            item.getByRole('link', { name }).boundingBox(),
            item.boundingBox(),
          ]);
          if (!grip || !link || !row) throw new Error(`${path}: the item is not shown`);
          // The name starts on the grip's line, to its right, and stays inside the item.
          expect(link.y, `${path}: the name starts below its grip`).toBeLessThan(grip.y + grip.height);
          expect(link.x, path).toBeGreaterThanOrEqual(grip.x + grip.width);
          expect(link.x + link.width, path).toBeLessThanOrEqual(row.x + row.width + 1);
        }
      } finally {
        await deleteCompetitor(page, server.url, id);
      }
    });
  }
});

test('without JavaScript at 320 px the ranking and the board fit: names keep room, move buttons stay on screen', async ({
  browser,
  server,
}) => {
  const context = await browser.newContext({
    javaScriptEnabled: false,
    viewport: { width: 320, height: 800 },
  });
  try {
    const page = await context.newPage();
    await signIn(page, server.url);
    for (const path of ['/ranking', '/segments']) {
      await page.goto(`${server.url}${path}`);
      const items = page.locator('.sortable-item');
      expect(await items.count(), path).toBeGreaterThan(0);
      for (const item of await items.all()) {
        const label = `${path}: ${(await item.textContent())?.trim().slice(0, 30)}`;
        for (const button of await item.locator('.move-buttons button').all()) {
          const box = await button.boundingBox();
          expect(box && box.x + box.width <= 320, `${label}: a move button past the screen's edge`).toBe(
            true,
          );
        }
        const link = await item.getByRole('link').first().boundingBox();
        // 6rem at least: a name squeezed to a few letters a line is no more readable than one cut off.
        if (link) expect(link.width, `${label}: the name's width`).toBeGreaterThanOrEqual(96);
      }
    }
  } finally {
    await context.close();
  }
});

test.describe('space between a page header, its buttons and what follows', () => {
  for (const width of [1280, 375]) {
    test(`at ${width} px nothing touches: the card's and the history's buttons, the board's instructions`, async ({
      page,
      server,
    }) => {
      await page.setViewportSize({ width, height: 900 });
      await signIn(page, server.url);
      const id = await addCompetitor(page, server.url, `Spacing ${randomBytes(2).toString('hex')}`);
      /** The gap from the bottom of `above` to the top of `below`, in px. */
      const gap = async (above: string, below: string) => {
        const [a, b] = await Promise.all([
          page.locator(above).first().boundingBox(),
          page.locator(below).first().boundingBox(),
        ]);
        if (!a || !b) throw new Error(`not shown: ${above} / ${below}`);
        return b.y - (a.y + a.height);
      };
      try {
        await gotoReady(page, `${server.url}/competitors/${id}`);
        expect(await gap('#battlecard-header .row-actions', '#battlecard-region')).toBeGreaterThanOrEqual(8);
        await gotoReady(page, `${server.url}/competitors/${id}/history`);
        expect(await gap('#history-header .page-header', 'form.table-toolbar')).toBeGreaterThanOrEqual(8);
        await gotoReady(page, `${server.url}/segments`);
        expect(await gap('#board-help', '.segment-board')).toBeGreaterThanOrEqual(8);
        await gotoReady(page, `${server.url}/ranking`);
        expect(await gap('#ranking-help', '[data-sortable-list="ranking"]')).toBeGreaterThanOrEqual(8);
      } finally {
        await deleteCompetitor(page, server.url, id);
      }
    });
  }
});

test('the ranking and the board offer grips and drag help only where dragging works; without JavaScript, the move buttons (helper-72)', async ({
  browser,
  server,
}) => {
  const cases = [
    { path: '/ranking', help: '#ranking-help' },
    { path: '/segments', help: '#board-help' },
  ];
  const noScript = await browser.newContext({ javaScriptEnabled: false });
  const withScript = await browser.newContext();
  try {
    const bare = await noScript.newPage();
    await signIn(bare, server.url);
    const full = await withScript.newPage();
    await signIn(full, server.url);
    for (const { path, help } of cases) {
      await bare.goto(`${server.url}${path}`);
      // Grips that would do nothing are not offered, and the help names what does work.
      await expect(bare.locator('[data-drag-handle]').first()).toBeAttached();
      expect(await bare.locator('[data-drag-handle]:visible').count(), path).toBe(0);
      // What is on screen (innerText leaves out what is not shown).
      const bareHelp = await bare.locator(help).innerText();
      expect(bareHelp, path).toMatch(/with its ↑ and ↓ buttons; each move is saved at once\./);
      expect(bareHelp, path).not.toContain('Drag');

      await gotoReady(full, `${server.url}${path}`);
      await expect(full.locator('[data-sortable][data-enhanced]'), path).toBeAttached();
      // Every grip is shown (however many competitors other tests on this server added).
      const grips = await full.locator('[data-drag-handle]').count();
      expect(grips, path).toBeGreaterThan(0);
      await expect(full.locator('[data-drag-handle]:visible'), path).toHaveCount(grips);
      const fullHelp = await full.locator(help).innerText();
      expect(fullHelp, path).toContain('Drag a competitor');
      expect(fullHelp, path).not.toContain('each move is saved at once');
    }
  } finally {
    await noScript.close();
    await withScript.close();
  }
});
