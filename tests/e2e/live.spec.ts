import { expect, test } from './support/fixtures.ts';
import { addCompetitor, deleteCompetitor, putNote } from './support/competitors.ts';
import { waitForLiveMark } from './support/live-mark.ts';
import { signIn } from './support/sign-in.ts';
import { trapXss } from './support/xss-trap.ts';
import { withTwoSignedIn } from './support/two-sessions.ts';

test.describe('live updates', () => {
  // Two sessions, sign-ins (scrypt) and a user to create: generous on a busy two-core machine.
  test.setTimeout(90_000);

  test('a note edit in another session updates an open table and battlecard without a reload', async ({
    browser,
    server,
  }) => {
    const alice = await browser.newContext();
    const bob = await browser.newContext();
    try {
      const a = await alice.newPage();
      const b = await bob.newPage();
      await signIn(a, server.url);
      await signIn(b, server.url);
      // A competitor of its own, so other specs sharing this server keep their demo data.
      const name = `Live Co ${Date.now()}`;
      await a.goto(`${server.url}/competitors/new`);
      await a.getByLabel('Name').fill(name);
      await a.getByLabel('Segment').selectOption('smb');
      await a.getByRole('button', { name: 'Add competitor' }).click();
      await expect(a).toHaveURL(/\/competitors\/[0-9a-f-]{36}$/);
      const id = a.url().split('/').pop() ?? '';
      const list = `${server.url}/competitors?search=${encodeURIComponent(name)}&sort=&page=1&perPage=15`;
      await b.goto(list);
      await expect(b.locator('html')).toHaveAttribute('data-live', 'connected');
      await b.evaluate(() => ((window as unknown as { __marker: number }).__marker = 42));
      // Bob is typing in the search box: his focus and text must survive the live refresh.
      const search = b.getByRole('searchbox');
      await search.click();

      const text = `Live price ${Date.now()}`;
      await a.goto(list);
      await a.getByRole('button', { name: `Pricing note (empty) for ${name}` }).click();
      const dialog = a.getByRole('dialog');
      await dialog.getByRole('textbox').fill(text);
      await dialog.getByRole('button', { name: 'Save' }).click();
      await expect(dialog).toBeHidden();

      const bobsIndicator = b.getByRole('button', { name: `Pricing note for ${name}` });
      await expect(bobsIndicator).toHaveAttribute('data-value', text);
      expect(await b.evaluate(() => (window as unknown as { __marker?: number }).__marker)).toBe(42);
      await expect(search).toBeFocused();

      // The battlecard, too.
      await b.goto(`${server.url}/competitors/${id}`);
      await expect(b.locator('html')).toHaveAttribute('data-live', 'connected');
      const second = `${text} (revised)`;
      await a.goto(`${server.url}/competitors/${id}`);
      await a.getByRole('button', { name: 'Edit pricing note' }).click();
      await a.getByRole('dialog').getByRole('textbox').fill(second);
      await a.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
      await expect(b.locator('[data-note-card="pricing"] [data-note-text]')).toHaveText(second);

      // Leave the shared server as we found it.
      const csrf = await a.locator('meta[name="csrf-token"]').getAttribute('content');
      const deleted = await a.request.post(`${server.url}/competitors/${id}/delete`, {
        form: { _csrf: csrf ?? '' },
        headers: { Origin: server.url },
        maxRedirects: 0,
      });
      expect(deleted.status()).toBe(302);
    } finally {
      await alice.close();
      await bob.close();
    }
  });

  test("a colleague's change shows a notice saying who changed what", async ({ browser, server }) => {
    const admin = await browser.newContext();
    const colleague = await browser.newContext();
    try {
      const a = await admin.newPage();
      // The notice shows other people's text: it must stay text.
      const xss = await trapXss(a);
      await signIn(a, server.url);
      const email = `grace-${Date.now()}@rivals.test`;
      await a.goto(`${server.url}/users/new`);
      await a.getByLabel('Email').fill(email);
      await a.getByLabel('Name').fill('Grace Hopper');
      await a.getByLabel('Role').selectOption('editor');
      await a.getByLabel('Password').fill('grace-password-123');
      await a.getByRole('button', { name: 'Add user' }).click();
      await expect(a.getByText('Grace Hopper can now sign in as editor.')).toBeVisible();

      const g = await colleague.newPage();
      await signIn(g, server.url, email, 'grace-password-123');
      await a.goto(`${server.url}/competitors`);
      await expect(a.locator('html')).toHaveAttribute('data-live', 'connected');

      await g.getByRole('button', { name: /^General note( \(empty\))? for Brightlane$/ }).click();
      await g
        .getByRole('dialog')
        .getByRole('textbox')
        .fill('Brightlane just cut prices by 20%. <img src=x onerror="window.__xss=1">');
      await g.getByRole('dialog').getByRole('button', { name: 'Save' }).click();

      await expect(a.locator('[data-notices]')).toContainText(
        'Grace Hopper: Edited the general note (version 1): Brightlane just cut prices by 20%. <img src=x onerror="windo…',
      );
      expect(await xss.hits()).toBe(0);
      expect(await a.locator('[data-notices] img').count()).toBe(0);
      await expect(
        a.getByRole('button', { name: /^General note( \(empty\))? for Brightlane$/ }),
      ).toHaveAttribute(
        'data-value',
        'Brightlane just cut prices by 20%. <img src=x onerror="window.__xss=1">',
      );
    } finally {
      await admin.close();
      await colleague.close();
    }
  });

  test('a change that cannot alter the page shown costs that page nothing; one on the page refreshes it', async ({
    browser,
    server,
  }) => {
    await withTwoSignedIn(browser, server.url, async (a, b, ids) => {
      const stamp = Date.now();
      // Sorted by name, descending, 10 a page: "zzzz…" is on page 1, "aaaa…" (after three "aaab…") is not.
      const top = await addCompetitor(a, server.url, `zzzz Live top ${stamp}`);
      const bottom = await addCompetitor(a, server.url, `aaaa Live bottom ${stamp}`);
      ids.push(top, bottom);
      for (const n of [1, 2, 3])
        ids.push(await addCompetitor(a, server.url, `aaab Live filler ${n} ${stamp}`));

      // The page's own requests say so (not activity: they do not hold off the session's idle end).
      const positionChecks: (string | undefined)[] = [];
      b.on('request', (r) => {
        if (r.url().endsWith('/live/position')) positionChecks.push(r.headers()['x-rivals-background']);
      });
      await b.goto(`${server.url}/competitors?sort=name:desc&page=1&perPage=10`);
      await expect(b.locator('html')).toHaveAttribute('data-live', 'connected');
      await expect(b.locator(`[data-row-id="${top}"]`)).toHaveCount(1);
      await expect(b.locator(`[data-row-id="${bottom}"]`)).toHaveCount(0);
      await expect.poll(() => positionChecks.length).toBeGreaterThan(0);
      expect(new Set(positionChecks)).toEqual(new Set(['1']));
      const reads: string[] = [];
      const readsMarked: (string | undefined)[] = [];
      b.on('request', (r) => {
        if (r.method() === 'GET' && r.resourceType() === 'fetch' && r.url().includes('/competitors')) {
          reads.push(r.url());
          readsMarked.push(r.headers()['x-rivals-background']);
        }
      });
      const refreshes = () => b.evaluate(() => document.documentElement.dataset.liveRefreshes ?? '0');
      const before = await refreshes();

      // A note on a row off Bob's page: his page heard it (its position moved on) and did nothing.
      const off = await putNote(a, server.url, bottom, 'pricing', `Off page ${stamp}`);
      await waitForLiveMark(b, off);
      expect(await refreshes()).toBe(before);
      expect(reads).toEqual([]);

      // A note on a row on his page: it refreshes, and shows it.
      await putNote(a, server.url, top, 'pricing', `On page ${stamp}`);
      await expect(
        b.getByRole('button', { name: `Pricing note for zzzz Live top ${stamp}` }),
      ).toHaveAttribute('data-value', `On page ${stamp}`);
      expect(await refreshes()).not.toBe(before);
      expect(reads).toHaveLength(1);
      expect(readsMarked).toEqual(['1']);

      // Bob sorting the table himself is activity: his request does not say "background".
      await b.locator('[data-sort-button="name"]').click();
      await expect.poll(() => reads.length).toBe(2);
      expect(readsMarked).toEqual(['1', undefined]);
    });
  });

  test('a battlecard whose competitor a colleague deletes says so for good, and offers no edits', async ({
    browser,
    server,
  }) => {
    await withTwoSignedIn(browser, server.url, async (a, b) => {
      await a.goto(`${server.url}/competitors`);
      const id = await addCompetitor(a, server.url, `Doomed Card ${Date.now()}`);
      await b.goto(`${server.url}/competitors/${id}`);
      await expect(b.locator('html')).toHaveAttribute('data-live', 'connected');
      await expect(b.getByRole('button', { name: 'Edit pricing note' })).toBeVisible();

      await deleteCompetitor(a, server.url, id);

      // The live notice fades after 5 s; the card stayed as if nothing had happened, Edit buttons and all.
      const banner = b.locator('#battlecard [data-deleted-banner]');
      await expect(banner).toHaveText(
        'This competitor was deleted. This is its battlecard as it was; it is no longer kept up to date.',
      );
      await expect(b.locator('#battlecard button[data-note]')).toHaveCount(0);
      await expect(b.getByRole('link', { name: 'Edit', exact: true })).toHaveCount(0);
      await expect(b.getByRole('button', { name: 'Print battlecard' })).toBeVisible();
      await expect(b.locator('[data-notices] .flash')).toHaveCount(0, { timeout: 10_000 });
      await expect(banner).toBeVisible();
    });
  });

  test('a delete confirmed while a live refresh replaced the table is still sent, and deletes', async ({
    browser,
    server,
  }) => {
    await withTwoSignedIn(browser, server.url, async (a, b, ids) => {
      const stamp = Date.now();
      const kept = `Confirm kept ${stamp}`;
      const doomed = `Confirm doomed ${stamp}`;
      ids.push(await addCompetitor(a, server.url, kept), await addCompetitor(a, server.url, doomed));
      await b.goto(`${server.url}/competitors?search=${encodeURIComponent(`${stamp}`)}`);
      await expect(b.locator('html')).toHaveAttribute('data-live', 'connected');

      // Bob asks to delete one row; while the question is open, Alice's note on the other row
      // refreshes his table (the region holding his form is replaced).
      await b.getByRole('button', { name: `Delete ${doomed}`, exact: true }).click();
      const dialog = b.getByRole('dialog');
      await expect(dialog).toContainText('This action cannot be undone!');
      await putNote(a, server.url, ids[0] ?? '', 'pricing', `Meanwhile ${stamp}`);
      // (Under the modal dialog the table is hidden from the accessibility tree: found by its markup.)
      await expect(
        b.locator(`tr[data-row-id="${ids[0]}"] button[data-value="Meanwhile ${stamp}"]`),
      ).toHaveCount(1);
      await expect(dialog).toBeVisible();

      await dialog.getByRole('button', { name: 'Yes, delete it!' }).click();
      await expect(b.getByText(`${doomed} was deleted.`, { exact: true })).toBeVisible();
      ids.pop();
      await b.goto(`${server.url}/competitors?search=${encodeURIComponent(`${stamp}`)}`);
      await expect(b.getByRole('button', { name: `Delete ${doomed}`, exact: true })).toHaveCount(0);
      await expect(b.getByRole('button', { name: `Delete ${kept}`, exact: true })).toHaveCount(1);
    });
  });

  test('a delete cancelled by keyboard after a live refresh replaced the table puts focus back on the Delete button', async ({
    browser,
    server,
  }) => {
    await withTwoSignedIn(browser, server.url, async (a, b, ids) => {
      const stamp = Date.now();
      const kept = `Cancel kept ${stamp}`;
      ids.push(await addCompetitor(a, server.url, kept));
      await b.goto(`${server.url}/competitors?search=${encodeURIComponent(`${stamp}`)}`);
      await expect(b.locator('html')).toHaveAttribute('data-live', 'connected');

      const opener = b.getByRole('button', { name: `Delete ${kept}`, exact: true });
      await opener.focus();
      await b.keyboard.press('Enter');
      const dialog = b.getByRole('dialog');
      await expect(dialog).toContainText('This action cannot be undone!');
      await putNote(a, server.url, ids[0] ?? '', 'pricing', `Meanwhile ${stamp}`);
      await expect(
        b.locator(`tr[data-row-id="${ids[0]}"] button[data-value="Meanwhile ${stamp}"]`),
      ).toHaveCount(1);

      // Enter on Cancel (the focused button): the row is a fresh copy now, and focus is on its Delete.
      await expect(dialog.getByRole('button', { name: 'Cancel' })).toBeFocused();
      await b.keyboard.press('Enter');
      await expect(dialog).toBeHidden();
      await expect(opener).toBeFocused();
      await expect(opener).toHaveCount(1);
    });
  });
});
