import type { Page, WebSocketRoute } from '@playwright/test';
import { expect, test } from './support/fixtures.ts';
import { addCompetitor, csrfToken, deleteCompetitor, putNote } from './support/competitors.ts';
import { signIn } from './support/sign-in.ts';
import { withTwoSignedIn } from './support/two-sessions.ts';

/* Live updates screen by screen, beyond the table (live.spec.ts): what an open page shows of a colleague's change. */

test.describe('live updates on every screen', () => {
  // Two sessions and their sign-ins (scrypt): generous on a busy two-core machine.
  test.setTimeout(90_000);

  test("an open note history shows a colleague's note change without a reload, and catches up after being offline", async ({
    browser,
    server,
  }) => {
    await withTwoSignedIn(browser, server.url, async (a, b, ids) => {
      const stamp = Date.now();
      const id = await addCompetitor(a, server.url, `History Live ${stamp}`);
      ids.push(id);
      await putNote(a, server.url, id, 'pricing', `First price ${stamp}`);
      const socket = await cuttableSocket(b);
      await b.goto(`${server.url}/competitors/${id}/history`);
      await expect(b.locator('html')).toHaveAttribute('data-live', 'connected');
      await expect(b.locator('[data-history-entry]')).toHaveCount(1);
      // Bob has started choosing a moment to look at: what he typed stays.
      const asOf = b.getByLabel('As of (UTC)');
      await asOf.fill('2020-01-02T03:04:05');

      await putNote(a, server.url, id, 'pricing', `Second price ${stamp}`);
      await expect(b.locator('[data-history-entry="pricing:2"]')).toContainText(`Second price ${stamp}`);
      await expect(b.locator('[data-history-count]')).toHaveText('1–2 of 2 changes, newest first');
      await expect(asOf).toHaveValue('2020-01-02T03:04:05');

      // Offline while Alice writes again (the socket dropped too): back online, the page catches up.
      await b.context().setOffline(true);
      await socket.cut();
      await expect(b.locator('html')).toHaveAttribute('data-live', 'disconnected');
      await putNote(a, server.url, id, 'general', `While away ${stamp}`);
      await expect(b.locator('[data-history-entry="general:1"]')).toHaveCount(0);
      socket.restore();
      await b.context().setOffline(false);
      await expect(b.locator('[data-history-entry="general:1"]')).toContainText(`While away ${stamp}`);
    });
  });

  test("a change projected between a page's render and its first head check is shown, not taken as the starting point", async ({
    browser,
    server,
  }) => {
    await withTwoSignedIn(browser, server.url, async (a, b, ids) => {
      const stamp = Date.now();
      const id = await addCompetitor(a, server.url, `Render Gap ${stamp}`);
      ids.push(id);
      // Bob's page gets no socket messages, and its first head check waits until Alice's change is projected.
      const socket = await cuttableSocket(b);
      await socket.cut();
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let held = 0;
      await b.route('**/live/position', async (route) => {
        if (held++ === 0) await released;
        await route.continue();
      });
      await b.goto(`${server.url}/competitors/${id}`);
      await expect.poll(() => held).toBe(1);
      await expect(b.locator('meta[name="live-position"]')).toHaveAttribute('content', /^\d+:\d+$/);

      await putNote(a, server.url, id, 'pricing', `Priced after the render ${stamp}`);
      await expect
        .poll(async () => (await a.request.get(`${server.url}/competitors/${id}`)).text())
        .toContain(`Priced after the render ${stamp}`);
      release();

      await expect(b.locator('#battlecard')).toContainText(`Priced after the render ${stamp}`);
    });
  });

  test('a head check that finds the list a transaction further on, at a lower position, refreshes the page', async ({
    browser,
    server,
  }) => {
    // The log is read by transaction, then position (decision 0002): a later batch can end at a lower
    // position than the page stands at. Positions alone would call that "behind"; the mark says "ahead".
    await withTwoSignedIn(browser, server.url, async (a, b, ids) => {
      const stamp = Date.now();
      const id = await addCompetitor(a, server.url, `Mark Order ${stamp}`);
      ids.push(id);
      const socket = await cuttableSocket(b);
      await b.goto(`${server.url}/competitors/${id}`);
      await expect(b.locator('html')).toHaveAttribute('data-live', 'connected');
      const rendered = (await b.locator('meta[name="live-position"]').getAttribute('content')) ?? '';
      const renderedPosition = Number(rendered.split(':')[1]);
      // No message reaches the page; its head checks answer the real list's transaction at a lower position.
      await socket.cut();
      await b.route('**/live/position', async (route) => {
        const real = (await (await route.fetch()).json()) as { list: string };
        const transaction = real.list.split(':')[0];
        await route.fulfill({ json: { ...real, list: `${transaction}:${renderedPosition - 1}` } });
      });

      await putNote(a, server.url, id, 'general', `Noted in a later transaction ${stamp}`);
      await expect
        .poll(async () => (await a.request.get(`${server.url}/competitors/${id}`)).text())
        .toContain(`Noted in a later transaction ${stamp}`);
      await b.evaluate(() => window.dispatchEvent(new Event('online')));
      await expect(b.locator('#battlecard')).toContainText(`Noted in a later transaction ${stamp}`);
    });
  });

  test("an open battlecard takes a colleague's rename: its heading and the tab's title, not only the facts", async ({
    browser,
    server,
  }) => {
    await withTwoSignedIn(browser, server.url, async (a, b, ids) => {
      const stamp = Date.now();
      const name = `Card Name ${stamp}`;
      const id = await addCompetitor(a, server.url, name);
      ids.push(id);
      await b.goto(`${server.url}/competitors/${id}`);
      await expect(b.locator('html')).toHaveAttribute('data-live', 'connected');
      await expect(b.getByRole('heading', { level: 1 })).toHaveText(name);

      // Alice renames it and raises its threat through the edit form.
      await a.goto(`${server.url}/competitors/${id}/edit`);
      await a.getByLabel('Name').fill(`${name} Renamed`);
      await a.getByLabel('Threat').selectOption('high');
      await a.getByRole('button', { name: 'Save changes' }).click();
      await expect(a).toHaveURL(`${server.url}/competitors/${id}`);

      await expect(b.locator('#battlecard .battlecard__facts')).toContainText('high');
      await expect(b.getByRole('heading', { level: 1 })).toHaveText(`${name} Renamed`);
      await expect(b).toHaveTitle(`${name} Renamed · Rivals`);
      // The page's own buttons still work after the swap.
      await expect(b.getByRole('button', { name: 'Print battlecard' })).toBeVisible();
      await expect(b.getByRole('link', { name: 'History' })).toHaveAttribute(
        'href',
        `/competitors/${id}/history`,
      );
    });
  });

  test("an open edit form is saved over a colleague's note edit (the form shows no notes) and merged with a colleague's edit of other fields", async ({
    browser,
    server,
  }) => {
    await withTwoSignedIn(browser, server.url, async (a, b, ids) => {
      const stamp = Date.now();
      const name = `Edit Form ${stamp}`;
      const id = await addCompetitor(a, server.url, name);
      ids.push(id);
      await b.goto(`${server.url}/competitors/${id}/edit`);
      await b.getByLabel('Threat').selectOption('high');

      // Meanwhile Alice writes a note: nothing the form shows.
      await putNote(a, server.url, id, 'pricing', `Cheaper now ${stamp}`);
      await b.getByRole('button', { name: 'Save changes' }).click();
      await expect(b).toHaveURL(`${server.url}/competitors/${id}`);
      await expect(b.locator('#battlecard .battlecard__facts')).toContainText('high');
      await expect(b.locator('[data-note-card="pricing"] [data-note-text]')).toHaveText(
        `Cheaper now ${stamp}`,
      );

      // A change to other fields of the form is merged with Bob's: both are saved (decision 0021).
      await b.goto(`${server.url}/competitors/${id}/edit`);
      await b.getByLabel('Headquarters').fill('Lisbon');
      await a.goto(`${server.url}/competitors/${id}/edit`);
      await a.getByLabel('Name').fill(`${name} Renamed`);
      await a.getByRole('button', { name: 'Save changes' }).click();
      await expect(a).toHaveURL(`${server.url}/competitors/${id}`);
      await b.getByRole('button', { name: 'Save changes' }).click();
      await expect(b).toHaveURL(`${server.url}/competitors/${id}`);
      await expect(b.getByRole('heading', { name: `${name} Renamed` })).toBeVisible();
      await expect(b.locator('#battlecard .battlecard__facts')).toContainText('Lisbon');
    });
  });

  test('every screen left open while offline catches up once back: table, battlecard, ranking, board and audit log', async ({
    browser,
    server,
  }) => {
    await withTwoSignedIn(browser, server.url, async (a, b, ids) => {
      const stamp = Date.now();
      const name = `Away Co ${stamp}`;
      const id = await addCompetitor(a, server.url, name);
      ids.push(id);
      const screens = {
        table: `/competitors?search=${encodeURIComponent(`Co ${stamp}`)}`,
        card: `/competitors/${id}`,
        ranking: '/ranking',
        board: '/segments',
        audit: '/audit',
      };
      const pages: Record<string, Page> = {};
      const sockets: { restore(): void }[] = [];
      for (const [screen, path] of Object.entries(screens)) {
        const page = screen === 'table' ? b : await b.context().newPage();
        pages[screen] = page;
        const socket = await cuttableSocket(page);
        sockets.push(socket);
        await page.goto(`${server.url}${path}`);
        await expect(page.locator('html')).toHaveAttribute('data-live', 'connected');
        await socket.cut();
        await expect(page.locator('html')).toHaveAttribute('data-live', 'disconnected');
      }
      await b.context().setOffline(true);

      // While Bob is away, Alice renames the competitor and adds another.
      await a.goto(`${server.url}/competitors/${id}/edit`);
      await a.getByLabel('Name').fill(`${name} Renamed`);
      await a.getByRole('button', { name: 'Save changes' }).click();
      await expect(a).toHaveURL(`${server.url}/competitors/${id}`);
      const added = `Arrived Co ${stamp}`;
      ids.push(await addCompetitor(a, server.url, added));
      await expect(pages.table!.locator('[data-row-id]')).toHaveCount(1);

      // Back online: each page's next try reconnects (the proxy lets it through again) and catches up.
      for (const socket of sockets) socket.restore();
      await b.context().setOffline(false);
      await expect(pages.table!.locator(`[data-row-id="${id}"]`)).toContainText(`${name} Renamed`);
      await expect(pages.table!.locator(`[data-row-id="${ids[1]}"]`)).toContainText(added);
      await expect(pages.card!.getByRole('heading', { level: 1 })).toHaveText(`${name} Renamed`);
      for (const screen of ['ranking', 'board'] as const) {
        const page = pages[screen]!;
        await expect(page.locator(`.sortable-item[data-id="${id}"]`)).toContainText(`${name} Renamed`);
        await expect(page.locator(`.sortable-item[data-id="${ids[1]}"]`)).toHaveCount(1);
        await expect(page.locator('[data-sortable][data-sort-ready="true"]')).toHaveCount(1);
      }
      await expect(
        pages.audit!.getByRole('cell', { name: `Added ${added} (SMB, medium threat)` }),
      ).toBeVisible();
    });
  });

  test('an open audit log shows a user added and a role changed without a reload, and catches up after being offline', async ({
    browser,
    server,
  }) => {
    await withTwoSignedIn(browser, server.url, async (a, b) => {
      const stamp = Date.now();
      const userId = crypto.randomUUID();
      const email = `audit-live-${stamp}@example.com`;
      const socket = await cuttableSocket(b);
      await b.goto(`${server.url}/audit`);
      await expect(b.locator('html')).toHaveAttribute('data-live', 'connected');

      // Alice, an admin, adds a user: Bob's open audit log shows it (no competitor changed).
      const added = await a.request.post(`${server.url}/users`, {
        headers: { 'Idempotency-Key': userId },
        form: {
          _csrf: await csrfToken(a),
          email,
          displayName: `Audit Live ${stamp}`,
          role: 'viewer',
          password: 'a-long-enough-password-0123',
        },
        maxRedirects: 0,
      });
      expect(added.status()).toBe(302);
      await expect(
        b.getByRole('cell', { name: `Added user Audit Live ${stamp} <${email}> as viewer` }),
      ).toBeVisible();

      // Offline while Alice makes them an editor (the socket dropped too): back online, it catches up.
      await b.context().setOffline(true);
      await socket.cut();
      await expect(b.locator('html')).toHaveAttribute('data-live', 'disconnected');
      const changed = await a.request.post(`${server.url}/users/${userId}/role`, {
        form: { _csrf: await csrfToken(a), role: 'editor' },
        maxRedirects: 0,
      });
      expect(changed.status()).toBe(302);
      const roleLine = b.getByRole('cell', {
        name: `Changed the role of Audit Live ${stamp} <${email}> from viewer to editor`,
      });
      await expect(roleLine).toHaveCount(0);
      socket.restore();
      await b.context().setOffline(false);
      await expect(roleLine).toBeVisible();
    });
  });

  test('an audit line committed after one with a higher position is still shown live', async ({
    browser,
    server,
  }) => {
    // On Postgres, log order is by transaction, then position: a line with a lower position can be
    // projected (and announced) after one with a higher position. Every announcement refreshes, whatever
    // the page has heard before (here a mark far ahead, injected).
    await withTwoSignedIn(browser, server.url, async (a, b) => {
      const stamp = Date.now();
      const email = `audit-late-${stamp}@example.com`;
      const sockets: WebSocketRoute[] = [];
      await b.routeWebSocket(/\/socket\.io\//, (ws) => {
        ws.connectToServer();
        sockets.push(ws);
      });
      await b.goto(`${server.url}/audit`);
      await expect(b.locator('html')).toHaveAttribute('data-live', 'connected');
      // A mark far ahead of the page's (live-mark.ts): a later transaction.
      const rendered = (await b.locator('meta[name="live-audit"]').getAttribute('content')) ?? '0:0';
      const heard = `${BigInt(rendered.split(':')[0] ?? 0) + 1_000n}:1`;
      // Socket.IO's frame for an event on the main namespace: the announcement of a later line.
      sockets.at(-1)?.send(`42${JSON.stringify(['audit', { mark: heard }])}`);
      await expect(b.locator('html')).toHaveAttribute('data-live-audit', heard);

      const added = await a.request.post(`${server.url}/users`, {
        headers: { 'Idempotency-Key': crypto.randomUUID() },
        form: {
          _csrf: await csrfToken(a),
          email,
          displayName: `Audit Late ${stamp}`,
          role: 'viewer',
          password: 'a-long-enough-password-0123',
        },
        maxRedirects: 0,
      });
      expect(added.status()).toBe(302);
      await expect(
        b.getByRole('cell', { name: `Added user Audit Late ${stamp} <${email}> as viewer` }),
      ).toBeVisible();
    });
  });

  test("a colleague's note edit is announced with the competitor it is on, wherever the viewer is", async ({
    browser,
    server,
  }) => {
    const admin = await browser.newContext();
    const colleague = await browser.newContext();
    let id = '';
    const a = await admin.newPage();
    try {
      await signIn(a, server.url);
      const stamp = Date.now();
      const name = `Noted Co ${stamp}`;
      id = await addCompetitor(a, server.url, name);
      const email = `ada-${stamp}@rivals.test`;
      await a.goto(`${server.url}/users/new`);
      await a.getByLabel('Email').fill(email);
      await a.getByLabel('Name').fill('Ada Lovelace');
      await a.getByLabel('Role').selectOption('editor');
      await a.getByLabel('Password').fill('ada-password-1234');
      await a.getByRole('button', { name: 'Add user' }).click();
      await expect(a.getByText('Ada Lovelace can now sign in as editor.')).toBeVisible();
      const c = await colleague.newPage();
      await signIn(c, server.url, email, 'ada-password-1234');

      // The admin looks at the ranking: the note is not on screen, so the notice is all they learn.
      await a.goto(`${server.url}/ranking`);
      await expect(a.locator('html')).toHaveAttribute('data-live', 'connected');
      await putNote(c, server.url, id, 'weaknesses', `Slow support ${stamp}`);
      await expect(a.locator('[data-notices]')).toContainText(
        `Ada Lovelace: Edited the weaknesses note (version 1): Slow support ${stamp} (${name})`,
      );
    } finally {
      if (id) await deleteCompetitor(a, server.url, id);
      await admin.close();
      await colleague.close();
    }
  });
});

/**
 * The page's live socket, through a proxy the test can cut: Chromium's offline emulation leaves an open
 * WebSocket open (and its messages flowing), so a page "offline" that way would not miss anything.
 * While cut, the page's attempts to reconnect are closed at once, as a restarting server's would be.
 */
async function cuttableSocket(page: Page) {
  let cut = false;
  const open = new Set<WebSocketRoute>();
  await page.routeWebSocket(/\/socket\.io\//, (ws) => {
    if (cut) return void ws.close();
    ws.connectToServer();
    open.add(ws);
  });
  return {
    async cut() {
      cut = true;
      await Promise.all([...open].map((ws) => ws.close()));
      open.clear();
    },
    restore() {
      cut = false;
    },
  };
}
