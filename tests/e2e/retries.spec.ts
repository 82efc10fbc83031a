import { randomBytes } from 'node:crypto';
import type { Browser, Locator, Page, Request, Route } from '@playwright/test';
import { expect, serverFixture, test as base } from './support/fixtures.ts';
import type { RunningServer } from './support/server.ts';
import { addCompetitor, deleteCompetitor, putNote } from './support/competitors.ts';
import { signIn } from './support/sign-in.ts';
import { reloadTheErrorPage } from './support/error-page.ts';

/**
 * A retry is normal: the server handles a change, its answer never reaches the browser (a dropped
 * connection, a proxy timeout), and the same change is sent again — by the page's script (component
 * calls resend with the same Idempotency-Key), or by the user reloading the browser's error page
 * (which posts the form again, hidden key and all). The change must happen once, and the user must
 * see it saved, not an error and not a duplicate. One case per state change the UI offers.
 */

const unique = (prefix: string) => `${prefix} ${randomBytes(4).toString('hex')}`;

const NOTES = '/components/competitor-notes';
const isNoteCall = (request: Request) =>
  request.method() === 'POST' && new URL(request.url()).pathname === NOTES;

/**
 * Lets the first matching call reach the server and be handled, then drops the connection before the
 * browser sees the answer; later calls pass. `status`: the status of the answer that was lost.
 */
async function loseFirstAnswer(page: Page, url: string): Promise<{ status: Promise<number> }> {
  let lost: (status: number) => void = () => undefined;
  const lostStatus = new Promise<number>((resolve) => (lost = resolve));
  let first = true;
  await page.route(url, async (route: Route) => {
    if (!first) return route.continue();
    first = false;
    const response = await route.fetch();
    lost(response.status());
    await route.abort('connectionreset');
  });
  // In an object: an async function returning the promise itself would wait for it.
  return { status: lostStatus };
}

/**
 * Like `loseFirstAnswer`, for every matching call until `stop()`: each one is handled by the server and
 * its answer lost, so the page's own resends are used up. `handled`: how many the server answered.
 */
async function loseEveryAnswer(page: Page, url: string) {
  let losing = true;
  const state = { handled: 0, stop: () => (losing = false) };
  await page.route(url, async (route: Route) => {
    if (!losing) return route.continue();
    await route.fetch();
    state.handled++;
    await route.abort('connectionreset');
  });
  return state;
}

interface LostPost {
  /** The status of the answer that was lost (a form post answers 302 once it has done its work). */
  status: Promise<number>;
  /** Every POST to the path, as sent: the first one and any resubmission. */
  posts: Request[];
}

/**
 * Forwards the request to the server. A connection the server had just closed as idle (its keep-alive
 * timeout) fails before the server reads anything: sent once more then, as a browser does. The form
 * carries its idempotency key, so even a second arrival is the same change.
 */
async function fetchOnce(route: Route) {
  try {
    return await route.fetch({ maxRedirects: 0 });
  } catch (error) {
    if (!(error instanceof Error && error.message.includes('ECONNRESET'))) throw error;
    return route.fetch({ maxRedirects: 0 });
  }
}

/**
 * A form post's variant: the first POST to `path` is handled by the server (its redirect not
 * followed, so nothing the answer sets up, like its notice, is consumed) and its answer is lost; the
 * browser shows its own connection error. Later posts pass.
 */
async function loseFirstPost(page: Page, path: string): Promise<LostPost> {
  let lost: (status: number) => void = () => undefined;
  const status = new Promise<number>((resolve) => (lost = resolve));
  const posts: Request[] = [];
  let first = true;
  await page.route(
    (url) => url.pathname === path,
    async (route) => {
      if (route.request().method() !== 'POST') return route.fallback();
      posts.push(route.request());
      if (!first) return route.fallback();
      first = false;
      const response = await fetchOnce(route);
      lost(response.status());
      await route.abort('connectionreset');
    },
  );
  return { status, posts };
}

/**
 * The user's retry of a form whose answer was lost: the browser shows its connection error page (no
 * false "saved"), and the user reloads it, which posts the same form again.
 */
async function reloadAfterLoss(page: Page, lost: LostPost): Promise<void> {
  expect([302, 303]).toContain(await lost.status);
  await reloadTheErrorPage(page);
  expect(lost.posts).toHaveLength(2);
}

/** Both posts carried the form's idempotency key, the same one. */
function expectOneKey(lost: LostPost): void {
  const keys = lost.posts.map((p) => new URLSearchParams(p.postData() ?? '').get('_idempotency_key'));
  expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
  expect(keys[1]).toBe(keys[0]);
}

/** The page's notices (flash messages and the script's notices), as text. */
const notices = (page: Page) => page.locator('[data-notices]');

/**
 * The user reloads the error page of a form whose answer was lost: the resubmission lands on `url`
 * with the notice of a change made (not an error), and carried the first post's key.
 */
async function resubmitted(page: Page, lost: LostPost, url: string, notice: string): Promise<void> {
  await reloadAfterLoss(page, lost);
  await expect(page).toHaveURL(url);
  await expect(notices(page)).toContainText(notice);
  expectOneKey(lost);
  await expect(page.getByRole('alert')).toHaveCount(0);
}

/** Every POST the page sends to `path` from now on, as sent. */
function postsTo(page: Page, path: string): Request[] {
  const sent: Request[] = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && new URL(r.url()).pathname === path) sent.push(r);
  });
  return sent;
}

/** The Idempotency-Key header of each request. */
const keysOf = (requests: Request[]) =>
  Promise.all(requests.map(async (r) => (await r.allHeaders())['idempotency-key']));

/** Opens the note dialog with `button`, types `text` and presses Save: the dialog. */
async function typeNote(page: Page, button: Locator, text: string): Promise<Locator> {
  await button.click();
  const dialog = page.getByRole('dialog');
  await dialog.locator('textarea').fill(text);
  await dialog.getByRole('button', { name: 'Save', exact: true }).click();
  return dialog;
}

/** Signs in and adds a competitor named after `label`: its name and id. */
async function freshCompetitor(page: Page, baseUrl: string, label: string) {
  await signIn(page, baseUrl);
  const name = unique(label);
  return { name, id: await addCompetitor(page, baseUrl, name) };
}

/** The page's address, loaded, with its script ready. */
async function openReady(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
}

/**
 * The audit log's rows (their text) for `search`, read once the log shows everything recorded before
 * this call: it is projected in log order, so once a marker change made now shows, every earlier one
 * does — a duplicate event included. Needs a signed-in page of the app (for its form token).
 */
async function auditRows(page: Page, baseUrl: string, search: string): Promise<string[]> {
  const rows = async (query: string) => {
    await page.goto(`${baseUrl}/audit?search=${encodeURIComponent(query)}&perPage=100`);
    return page.locator('[data-table] tbody tr').allInnerTexts();
  };
  const marker = unique('Audit marker');
  await addCompetitor(page, baseUrl, marker);
  await expect.poll(async () => (await rows(marker)).length).toBeGreaterThan(0);
  return rows(search);
}

const ofType = (rows: string[], type: string) => rows.filter((r) => r.includes(type));

/**
 * With the network back: the competitor's note history has `count` entries (`entry` among them, if
 * named), and the audit log as many note events.
 */
async function expectNoteChanges(
  page: Page,
  baseUrl: string,
  competitor: { id: string; name: string },
  count: number,
  entry?: string,
) {
  await page.unroute(`**${NOTES}`);
  await page.goto(`${baseUrl}/competitors/${competitor.id}/history`);
  await expect(page.locator('[data-history-entry]')).toHaveCount(count);
  if (entry) await expect(page.locator(`[data-history-entry="${entry}"]`)).toBeVisible();
  expect(ofType(await auditRows(page, baseUrl, competitor.name), 'CompetitorNoteUpdated')).toHaveLength(
    count,
  );
}

/** The ranking moves recorded so far. */
const rankChanges = async (page: Page, baseUrl: string) =>
  ofType(await auditRows(page, baseUrl, 'in the ranking'), 'CompetitorRankChanged').length;

// A server (and so a worker) of this spec's own: the reorders below must not move other specs' rows.
const test = base.extend<object, { server: RunningServer }>({ server: serverFixture });
test.describe.configure({ mode: 'serial', timeout: 90_000 });

const sortableIds = (list: Locator) =>
  list
    .locator(':scope > .sortable-item')
    .evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.id ?? ''));

async function readyRanking(page: Page, url: string): Promise<Locator> {
  await page.goto(`${url}/ranking`);
  await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
  await expect(page.locator('[data-sortable][data-sort-ready="true"]')).toHaveCount(1);
  return page.locator('[data-sortable-list="ranking"]');
}

/** The segment board as shown: each segment's id and its competitors' ids, in order. */
const board = (page: Page) =>
  page.locator('[data-sortable-groups] > .sortable-group').evaluateAll((els) =>
    els.map((g) => ({
      value: (g as HTMLElement).dataset.id ?? '',
      items: [...g.querySelectorAll<HTMLElement>('.sortable-item')].map((li) => li.dataset.id ?? ''),
    })),
  );

async function readyBoard(page: Page, url: string) {
  await page.goto(`${url}/segments`);
  await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
  await expect(page.locator('[data-sortable][data-sort-ready="true"]')).toHaveCount(1);
  return board(page);
}

/* A real mouse drag, as in drag-sort.spec.ts: press on the grip, move a little, release over the target. */
async function boxOf(target: Locator) {
  await expect.poll(async () => (await target.boundingBox()) !== null).toBe(true);
  const box = await target.boundingBox();
  if (!box) throw new Error(`nowhere to drop: ${String(target)}`);
  return box;
}

async function drag(page: Page, handle: Locator, target: Locator) {
  const to = await boxOf(target);
  const from = await boxOf(handle);
  await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
  await page.mouse.down();
  await page.mouse.move(from.x + from.width / 2 + 5, from.y + from.height / 2 + 5, { steps: 3 });
  const x = to.x + Math.min(to.width / 2, 30);
  const y = to.y + 3;
  await page.mouse.move(x, y, { steps: 15 });
  await page.mouse.move(x, y - 1, { steps: 2 });
  await page.mouse.up();
}

/** A second browser of the same server without JavaScript (the move buttons' forms), signed in as the admin. */
async function withoutScript(browser: Browser, server: RunningServer) {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await signIn(page, server.url);
  return { page, close: () => context.close() };
}

test.describe('component calls: the page resends with the same key', () => {
  test('update-note whose answer is lost: the browser resends it with the same key, it is saved once and shown saved', async ({
    page,
    server,
  }) => {
    const { name, id } = await freshCompetitor(page, server.url, 'Lost Answer');
    await openReady(page, `${server.url}/competitors?search=${encodeURIComponent(name)}`);

    const calls = postsTo(page, NOTES);
    const lost = await loseFirstAnswer(page, `**${NOTES}`);

    const pricing = page.locator(`tr[data-row-id="${id}"] button[data-note][data-column="pricing"]`);
    await pricing.click();
    const dialog = page.getByRole('dialog');
    const text = `Tiered, billed yearly ${randomBytes(3).toString('hex')}`;
    await dialog.locator('textarea').fill(text);
    const answered = page.waitForResponse((r) => isNoteCall(r.request()) && r.status() === 200);
    await dialog.getByRole('button', { name: 'Save', exact: true }).click();

    // The server handled the first call: it was accepted, and only the answer was lost.
    expect(await lost.status).toBe(200);
    const answer = (await (await answered).json()) as { status: string };
    expect(answer.status).toBe('accepted');
    expect(calls).toHaveLength(2);
    const keys = await keysOf(calls);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);

    // The user sees it saved, once: version 1, not 2.
    await expect(dialog).toBeHidden();
    await expect(page.getByRole('status').filter({ hasText: 'Saved the pricing note.' })).toBeVisible();
    await expect(pricing).toHaveAttribute('data-value', text);
    await expect(pricing).toHaveAttribute('data-version', '1');

    // One version in the history, one entry in the audit log.
    await expectNoteChanges(page, server.url, { id, name }, 1, 'pricing:1');

    await deleteCompetitor(page, server.url, id);
  });

  test('update-note from the battlecard whose answer is lost: saved once, the card shows it', async ({
    page,
    server,
  }) => {
    const { name, id } = await freshCompetitor(page, server.url, 'Lost Card');
    await openReady(page, `${server.url}/competitors/${id}`);

    const calls = postsTo(page, NOTES);
    const lost = await loseFirstAnswer(page, `**${NOTES}`);
    const edit = page.getByRole('button', { name: 'Edit strengths note', exact: true });
    const text = `Great onboarding ${randomBytes(3).toString('hex')}`;
    const dialog = await typeNote(page, edit, text);

    expect(await lost.status).toBe(200);
    await expect(dialog).toBeHidden();
    await expect(page.getByRole('status').filter({ hasText: 'Saved the strengths note.' })).toBeVisible();
    await expect(page.locator('[data-note-card="strengths"] [data-note-text]')).toHaveText(text);
    await expect(edit).toHaveAttribute('data-version', '1');
    expect(calls).toHaveLength(2);
    const keys = await keysOf(calls);
    expect(keys[1]).toBe(keys[0]);
    // No error was shown anywhere, and the page did not reload to get there.
    await expect(page.getByRole('alert')).toHaveCount(0);

    await expectNoteChanges(page, server.url, { id, name }, 1);

    await deleteCompetitor(page, server.url, id);
  });

  test('the conflict dialog: "Overwrite with mine" whose answer is lost is resent with the same key and saved once', async ({
    page,
    server,
  }) => {
    const { name, id } = await freshCompetitor(page, server.url, 'Lost Overwrite');
    await openReady(page, `${server.url}/competitors/${id}`);
    const edit = page.getByRole('button', { name: 'Edit general note', exact: true });
    await edit.click();
    const dialog = page.getByRole('dialog');
    await dialog.locator('textarea').fill('Mine');
    // Someone saves the note while the dialog is open.
    await putNote(page, server.url, id, 'general', 'Theirs');
    await dialog.getByRole('button', { name: 'Save', exact: true }).click();
    await expect(dialog).toContainText('This note was changed meanwhile');

    const calls = postsTo(page, NOTES);
    const lost = await loseFirstAnswer(page, `**${NOTES}`);
    await dialog.getByRole('button', { name: 'Overwrite with mine' }).click();
    expect(await lost.status).toBe(200);
    await expect(page.getByRole('status').filter({ hasText: 'Saved the general note.' })).toBeVisible();
    await expect(page.locator('[data-note-card="general"] [data-note-text]')).toHaveText('Mine');
    await expect(edit).toHaveAttribute('data-version', '2');
    expect(calls).toHaveLength(2);
    const keys = await keysOf(calls);
    expect(keys[1]).toBe(keys[0]);

    // Theirs (version 1) and mine (version 2): no third.
    await expectNoteChanges(page, server.url, { id, name }, 2);
    await deleteCompetitor(page, server.url, id);
  });

  test('update-note whose every answer is lost: the dialog says so and stays open; Save again is the same change, saved once', async ({
    page,
    server,
  }) => {
    const { name, id } = await freshCompetitor(page, server.url, 'Lost Again');
    await openReady(page, `${server.url}/competitors/${id}`);

    const calls = postsTo(page, NOTES);
    const lost = await loseEveryAnswer(page, `**${NOTES}`);
    const edit = page.getByRole('button', { name: 'Edit pricing note', exact: true });
    const text = `Per seat ${randomBytes(3).toString('hex')}`;
    const dialog = await typeNote(page, edit, text);

    // The page resent it on its own a few times (about 10 s), then told the user, keeping the dialog and
    // the text: not a false "saved", and nothing claims it was not saved either.
    await expect(dialog.locator('.swal2-validation-message')).toContainText('Could not reach the server', {
      timeout: 20_000,
    });
    await expect(dialog.locator('textarea')).toHaveValue(text);
    expect(lost.handled).toBeGreaterThan(1);
    await expect(page.getByRole('status').filter({ hasText: 'Saved the pricing note.' })).toHaveCount(0);

    // The connection is back; the user presses Save again: the same change, already made.
    lost.stop();
    const resent = calls.length;
    await dialog.getByRole('button', { name: 'Save', exact: true }).click();
    await expect(dialog).toBeHidden();
    await expect(page.getByRole('status').filter({ hasText: 'Saved the pricing note.' })).toBeVisible();
    await expect(page.locator('[data-note-card="pricing"] [data-note-text]')).toHaveText(text);
    await expect(edit).toHaveAttribute('data-version', '1');
    const keys = await keysOf(calls);
    expect(keys.length).toBeGreaterThan(resent);
    expect(new Set(keys).size).toBe(1);

    await expectNoteChanges(page, server.url, { id, name }, 1);
    await deleteCompetitor(page, server.url, id);
  });

  test('a reorder whose answer is lost: resent with the same key, applied once (one version later), and the order stays', async ({
    page,
    server,
  }) => {
    await signIn(page, server.url);
    const auditBefore = await rankChanges(page, server.url);
    let list = await readyRanking(page, server.url);
    const before = await sortableIds(list);
    const lost = await loseFirstAnswer(page, '**/components/ranking');
    const sent = postsTo(page, '/components/ranking');
    const answered = page.waitForResponse(
      (r) => new URL(r.url()).pathname === '/components/ranking' && r.status() === 200,
    );
    await list.locator(':scope > .sortable-item').nth(1).locator('[data-drag-handle]').focus();
    await page.keyboard.press('ArrowUp');

    expect(await lost.status).toBe(200);
    const answer = (await (await answered).json()) as { status: string; version: number };
    expect(sent).toHaveLength(2);
    const [first, again] = sent.map((r) => r.postDataJSON() as { expect: { version: number } });
    expect(again).toEqual(first);
    const [key, resentKey] = await keysOf(sent);
    expect(resentKey).toBe(key);
    // Applied once: had the resend been applied again, it would have been refused as stale (or been a
    // second version).
    expect(answer.status).toBe('accepted');
    expect(answer.version).toBe((first?.expect.version ?? 0) + 1);
    await expect(page.locator('[data-sortable][data-sort-ready="true"]')).toHaveCount(1);
    await expect(page.getByRole('alert')).toHaveCount(0);

    const expected = [before[1], before[0], ...before.slice(2)];
    await page.unroute('**/components/ranking');
    list = await readyRanking(page, server.url);
    expect(await sortableIds(list)).toEqual(expected);
    await expect(page.locator('[data-sortable]')).toHaveAttribute('data-version', String(answer.version));
    // One competitor moved up a place: one rank change, recorded once.
    expect((await rankChanges(page, server.url)) - auditBefore).toBe(1);
  });

  test('a reorder whose every answer is lost: applied once, and the page shows the saved order without claiming it was not saved', async ({
    page,
    server,
  }) => {
    await signIn(page, server.url);
    const auditBefore = await rankChanges(page, server.url);
    const list = await readyRanking(page, server.url);
    const before = await sortableIds(list);
    const lost = await loseEveryAnswer(page, '**/components/ranking');
    const keys: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && new URL(r.url()).pathname === '/components/ranking')
        void r.allHeaders().then((h) => keys.push(h['idempotency-key'] ?? ''));
    });
    await list.locator(':scope > .sortable-item').nth(2).locator('[data-drag-handle]').focus();
    await page.keyboard.press('ArrowUp');

    // After its own resends (about 10 s) the page gives up, says it could not confirm the move, and
    // shows the list as the server has it: the move is there, because the first call was handled.
    await expect(page.getByRole('alert')).toContainText('Could not reach the server', { timeout: 20_000 });
    await expect(page.locator('[data-sortable][data-sort-ready="true"]')).toHaveCount(1);
    const expected = [before[0], before[2], before[1], ...before.slice(3)];
    await expect.poll(() => sortableIds(page.locator('[data-sortable-list="ranking"]'))).toEqual(expected);
    await expect(page.locator('[data-sort-status]')).not.toContainText('Not saved');
    await expect(page.getByRole('alert')).not.toContainText('Not saved');
    expect(lost.handled).toBeGreaterThan(1);
    expect(new Set(keys).size).toBe(1);

    lost.stop();
    await page.unroute('**/components/ranking');
    expect(await sortableIds(await readyRanking(page, server.url))).toEqual(expected);
    expect((await rankChanges(page, server.url)) - auditBefore).toBe(1);
  });

  test('a segment-board drop whose answer is lost: resent with the same key, moved once, and the board keeps it', async ({
    page,
    server,
  }) => {
    await signIn(page, server.url);
    const segmentMoves = async () =>
      ofType(await auditRows(page, server.url, 'from the segment'), 'CompetitorMovedToSegment').length;
    const movesBefore = await segmentMoves();
    const start = await readyBoard(page, server.url);
    const from = start.findIndex((g) => g.items.length > 0);
    const into = (from + 1) % start.length;
    const moving = start[from]?.items[0] ?? '';

    const lost = await loseFirstAnswer(page, '**/components/segments');
    const sent = postsTo(page, '/components/segments');
    const answered = page.waitForResponse(
      (r) => new URL(r.url()).pathname === '/components/segments' && r.status() === 200,
    );
    const groups = page.locator('[data-sortable-groups] > .sortable-group');
    const target = groups.nth(into).locator('.sortable-item').first();
    await drag(
      page,
      page.locator(`.sortable-item[data-id="${moving}"] [data-drag-handle]`),
      (await target.count()) > 0 ? target : groups.nth(into).locator('[data-sortable-list]'),
    );

    expect(await lost.status).toBe(200);
    const answer = (await (await answered).json()) as { status: string; version: number };
    expect(sent).toHaveLength(2);
    const [first, again] = sent.map((r) => r.postDataJSON() as { expect: { version: number } });
    expect(again).toEqual(first);
    const [key, resentKey] = await keysOf(sent);
    expect(resentKey).toBe(key);
    // A drop between segments is more than one event (the move and the ranks it shifts): one drop later.
    expect(answer.status).toBe('accepted');
    expect(answer.version).toBeGreaterThan(first?.expect.version ?? 0);
    await expect(page.locator('[data-sortable][data-sort-ready="true"]')).toHaveCount(1);
    await expect(page.getByRole('alert')).toHaveCount(0);

    const expected = start.map((g, i) =>
      i === from ? { ...g, items: g.items.slice(1) } : i === into ? { ...g, items: [moving, ...g.items] } : g,
    );
    expect(await board(page)).toEqual(expected);
    await page.unroute('**/components/segments');
    expect(await readyBoard(page, server.url)).toEqual(expected);
    // Nothing was applied after the first: the board is still at the version that answer named.
    await expect(page.locator('[data-sortable]')).toHaveAttribute('data-version', String(answer.version));
    expect((await segmentMoves()) - movesBefore).toBe(1);
  });
});

test.describe('forms: reloading the error page posts the same key again', () => {
  test('adding a competitor: the resubmission lands on the new competitor, added once', async ({
    page,
    server,
  }) => {
    await signIn(page, server.url);
    await page.goto(`${server.url}/competitors/new`);
    const name = unique('Lost Add');
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('Segment').selectOption('smb');
    const lost = await loseFirstPost(page, '/competitors/new');
    await page.getByRole('button', { name: 'Add competitor' }).click();

    await reloadAfterLoss(page, lost);
    // The key names the competitor: the resubmission answers with the one the first post added.
    const key = new URLSearchParams(lost.posts[0]?.postData() ?? '').get('_idempotency_key');
    await expect(page).toHaveURL(`${server.url}/competitors/${key}`);
    await expect(notices(page)).toContainText(`${name} was added.`);
    expectOneKey(lost);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(name);

    await page.goto(`${server.url}/competitors?search=${encodeURIComponent(name)}`);
    await expect(page.locator('[data-table] tbody tr')).toHaveCount(1);
    expect(ofType(await auditRows(page, server.url, name), 'CompetitorAdded')).toHaveLength(1);
    await deleteCompetitor(page, server.url, key ?? '');
  });

  test('editing a competitor: the resubmission says saved (not "changed meanwhile"), one update', async ({
    page,
    server,
  }) => {
    const { name, id } = await freshCompetitor(page, server.url, 'Lost Edit');
    await page.goto(`${server.url}/competitors/${id}/edit`);
    const renamed = `${name} Renamed`;
    await page.getByLabel('Name').fill(renamed);
    await page.getByLabel('Headquarters').fill('Lisbon');
    const lost = await loseFirstPost(page, `/competitors/${id}/edit`);
    await page.getByRole('button', { name: 'Save' }).click();

    await resubmitted(page, lost, `${server.url}/competitors/${id}`, `${renamed} was saved.`);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(renamed);

    expect(ofType(await auditRows(page, server.url, name), 'CompetitorUpdated')).toHaveLength(1);
    await deleteCompetitor(page, server.url, id);
  });

  test('deleting a competitor (confirmed in the dialog): the resubmission says deleted, one deletion', async ({
    page,
    server,
  }) => {
    const { name, id } = await freshCompetitor(page, server.url, 'Lost Delete');
    await openReady(page, `${server.url}/competitors?search=${encodeURIComponent(name)}`);
    const lost = await loseFirstPost(page, `/competitors/${id}/delete`);
    await page.getByRole('button', { name: `Delete ${name}` }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText('This action cannot be undone!');
    await dialog.getByRole('button', { name: 'Yes, delete it!' }).click();

    // Back on the table as it was left (its search), with the table's four parameters.
    const table = `${server.url}/competitors?${new URLSearchParams({ search: name, sort: '', page: '1', perPage: '15' })}`;
    await resubmitted(page, lost, table, 'was deleted.');
    await page.goto(`${server.url}/competitors?search=${encodeURIComponent(name)}`);
    await expect(page.locator(`tr[data-row-id="${id}"]`)).toHaveCount(0);

    expect(ofType(await auditRows(page, server.url, name), 'CompetitorDeleted')).toHaveLength(1);
  });

  test('adding a user: the resubmission says added, one user who can sign in with the password', async ({
    page,
    browser,
    server,
  }) => {
    await signIn(page, server.url);
    const email = `lost-${randomBytes(4).toString('hex')}@rivals.test`;
    const displayName = unique('Lost User');
    const password = 'lost-answer-password-0123';
    await page.goto(`${server.url}/users/new`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Name').fill(displayName);
    await page.getByLabel('Role').selectOption('editor');
    await page.getByLabel('Password').fill(password);
    const lost = await loseFirstPost(page, '/users');
    await page.getByRole('button', { name: 'Add user' }).click();

    await resubmitted(page, lost, `${server.url}/users`, `${displayName} can now sign in as editor.`);
    await page.goto(`${server.url}/users?search=${encodeURIComponent(email)}`);
    await expect(page.locator('[data-table] tbody tr')).toHaveCount(1);
    expect(ofType(await auditRows(page, server.url, email), 'UserAdded')).toHaveLength(1);

    // The password stored with the first post is the one that works.
    const context = await browser.newContext();
    try {
      await signIn(await context.newPage(), server.url, email, password);
    } finally {
      await context.close();
    }
  });

  test("changing a user's role, disabling and enabling them: each resubmission says done, one event each", async ({
    page,
    server,
  }) => {
    await signIn(page, server.url);
    const email = `role-${randomBytes(4).toString('hex')}@rivals.test`;
    const displayName = unique('Lost Role');
    await page.goto(`${server.url}/users/new`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Name').fill(displayName);
    await page.getByLabel('Role').selectOption('viewer');
    await page.getByLabel('Password').fill('lost-role-password-0123');
    await page.getByRole('button', { name: 'Add user' }).click();
    await expect(page).toHaveURL(`${server.url}/users`);
    await page.goto(`${server.url}/users?search=${encodeURIComponent(email)}`);
    const row = page.locator('[data-table] tbody tr');
    await expect(row).toHaveCount(1);
    const userId = (await row.getAttribute('data-row-id')) ?? '';

    let lost = await loseFirstPost(page, `/users/${userId}/role`);
    await page.getByLabel(`Role of ${displayName}`).selectOption('editor');
    await row.getByRole('button', { name: 'Change' }).click();
    await resubmitted(page, lost, `${server.url}/users`, `${displayName} is now editor.`);

    await page.goto(`${server.url}/users?search=${encodeURIComponent(email)}`);
    lost = await loseFirstPost(page, `/users/${userId}/disable`);
    await row.getByRole('button', { name: `Disable ${displayName}` }).click();
    await resubmitted(page, lost, `${server.url}/users`, `${displayName} is disabled.`);

    await page.goto(`${server.url}/users?search=${encodeURIComponent(email)}`);
    await expect(row).toContainText('editor');
    await expect(row).toContainText('Disabled');
    lost = await loseFirstPost(page, `/users/${userId}/enable`);
    await row.getByRole('button', { name: `Enable ${displayName}` }).click();
    await resubmitted(page, lost, `${server.url}/users`, `${displayName} is enabled.`);

    await page.goto(`${server.url}/users?search=${encodeURIComponent(email)}`);
    await expect(row).toContainText('Active');
    const audit = await auditRows(page, server.url, displayName);
    expect(ofType(audit, 'UserRoleChanged')).toHaveLength(1);
    expect(ofType(audit, 'UserDisabled')).toHaveLength(1);
    expect(ofType(audit, 'UserEnabled')).toHaveLength(1);
  });

  test('the ranking move buttons (no JavaScript): the resubmission says moved, and it moved one place', async ({
    page,
    browser,
    server,
  }) => {
    await signIn(page, server.url);
    // Counted first: reading the audit log adds a marker competitor (at the end of the ranking).
    const auditBefore = await rankChanges(page, server.url);
    const before = await sortableIds(await readyRanking(page, server.url));
    const plain = await withoutScript(browser, server);
    try {
      await plain.page.goto(`${server.url}/ranking`);
      // The third, so that the resubmission could move it again (to the top) if it were a new change.
      const third = plain.page.locator('[data-sortable-list="ranking"] > .sortable-item').nth(2);
      expect(await third.getAttribute('data-id')).toBe(before[2]);
      const name = (await third.getAttribute('data-name')) ?? '';
      const lost = await loseFirstPost(plain.page, '/ranking/move');
      await third.getByRole('button', { name: `Move ${name} up`, exact: true }).click();

      await resubmitted(plain.page, lost, `${server.url}/ranking`, `Moved ${name}.`);
    } finally {
      await plain.close();
    }
    const expected = [before[0], before[2], before[1], ...before.slice(3)];
    expect(await sortableIds(await readyRanking(page, server.url))).toEqual(expected);
    expect((await rankChanges(page, server.url)) - auditBefore).toBe(1);
  });

  test('the segment move buttons (no JavaScript): the resubmission says moved, and it moved one place', async ({
    page,
    browser,
    server,
  }) => {
    await signIn(page, server.url);
    const reorders = async () =>
      ofType(await auditRows(page, server.url, 'Reordered the segments'), 'SegmentsReordered').length;
    const auditBefore = await reorders();
    const before = await readyBoard(page, server.url);
    const plain = await withoutScript(browser, server);
    try {
      await plain.page.goto(`${server.url}/segments`);
      const first = plain.page.locator('[data-sortable-groups] > .sortable-group').first();
      expect(await first.getAttribute('data-id')).toBe(before[0]?.value);
      const name = (await first.getAttribute('data-name')) ?? '';
      const lost = await loseFirstPost(plain.page, '/segments/move');
      await first.getByRole('button', { name: `Move the segment ${name} down`, exact: true }).click();

      await resubmitted(plain.page, lost, `${server.url}/segments`, `Moved the segment ${name}.`);
    } finally {
      await plain.close();
    }
    const expected = [before[1], before[0], ...before.slice(2)];
    expect(await readyBoard(page, server.url)).toEqual(expected);
    expect((await reorders()) - auditBefore).toBe(1);
  });
});
