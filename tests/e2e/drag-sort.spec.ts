import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { test as base, expect, type Browser, type Locator, type Page, type Request } from '@playwright/test';
import { serverFixture } from './support/fixtures.ts';
import type { RunningServer } from './support/server.ts';
import { waitForLiveMark, type AnsweredChange } from './support/live-mark.ts';
import { signIn } from './support/sign-in.ts';

/**
 * Drag-sorting in Chromium (issue 12, seed §7.6): real mouse drags on /ranking and /segments send
 * exactly the seed's shapes, the dropped order stays while saving and survives a reload, keyboard
 * moves, a stale drop from a second browser is refused and reloaded, and a viewer cannot reorder.
 * One server of its own (demo data), so reordering never disturbs the other specs' ranks.
 */

// Registered here, not imported with the shared `test`: a server (and so a worker) of this spec's own.
const test = base.extend<object, { server: RunningServer }>({ server: serverFixture });
test.describe.configure({ mode: 'serial' });

const ids = (list: Locator) =>
  list
    .locator(':scope > .sortable-item')
    .evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.id ?? ''));

async function ready(page: Page, url: string) {
  await page.goto(url);
  await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
  await expect(page.locator('[data-sortable][data-sort-ready="true"]')).toHaveCount(1);
}

/** A real mouse drag in two halves: press on the grip and start moving; then release over the target. */
async function startDrag(page: Page, handle: Locator) {
  // A live re-render may be swapping the list in right now: wait for the handle to have a box again.
  await expect.poll(async () => (await handle.boundingBox()) !== null).toBe(true);
  const from = await handle.boundingBox();
  if (!from) throw new Error('nothing to drag');
  await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
  await page.mouse.down();
  await page.mouse.move(from.x + from.width / 2 + 5, from.y + from.height / 2 + 5, { steps: 3 });
}

/** Measured before the drag starts: once it has, the board's layout is the drag's, not the page's. */
async function boxOf(target: Locator) {
  await expect.poll(async () => (await target.boundingBox()) !== null).toBe(true);
  const box = await target.boundingBox();
  if (!box) throw new Error(`nowhere to drop: ${String(target)}`);
  return box;
}

async function finishDrag(
  page: Page,
  to: { x: number; y: number; width: number; height: number },
  where: 'above' | 'below' = 'above',
) {
  const x = to.x + Math.min(to.width / 2, 30);
  const y = where === 'above' ? to.y + 3 : to.y + to.height - 3;
  await page.mouse.move(x, y, { steps: 15 });
  await page.mouse.move(x, y + (where === 'above' ? -1 : 1), { steps: 2 });
  await page.mouse.up();
}

async function drag(page: Page, handle: Locator, target: Locator, where: 'above' | 'below' = 'above') {
  const to = await boxOf(target);
  await startDrag(page, handle);
  await finishDrag(page, to, where);
}

/** Holds the component call's answer until `release` is called, and captures the request. */
async function holdAnswers(page: Page, component: string) {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const requests: Request[] = [];
  await page.route(`**/components/${component}`, async (route) => {
    requests.push(route.request());
    await gate;
    await route.continue();
  });
  return { requests, release: () => release() };
}

async function newUser(page: Page, server: RunningServer, role: 'viewer' | 'editor') {
  const email = `${role}-${randomBytes(4).toString('hex')}@rivals.test`;
  const password = `${role}-password-0123`;
  await page.goto(`${server.url}/users/new`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Name').fill(`Drag ${role}`);
  await page.getByLabel('Role').selectOption(role);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Add user' }).click();
  await expect(page).toHaveURL(`${server.url}/users`);
  return { email, password };
}

/** Signs in as the admin on /ranking: its list, and the order it shows at first. */
async function signedInRanking(page: Page, server: RunningServer) {
  await signIn(page, server.url);
  await ready(page, `${server.url}/ranking`);
  const list = page.locator('[data-sortable-list="ranking"]');
  return { list, before: await ids(list) };
}

async function signedIn(browser: Browser, server: RunningServer, user: { email: string; password: string }) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page, server.url, user.email, user.password);
  return { page, close: () => context.close() };
}

test('ranking: a mouse drag sends [{order, value}], stays put while saving, and survives a reload', async ({
  page,
  server,
}) => {
  const { list, before } = await signedInRanking(page, server);
  expect(before.length).toBeGreaterThanOrEqual(4);
  const expected = [before[2], before[0], before[1], ...before.slice(3)];

  const held = await holdAnswers(page, 'ranking');
  const third = list.locator(':scope > .sortable-item').nth(2);
  await drag(page, third.locator('[data-drag-handle]'), list.locator(':scope > .sortable-item').first());
  await expect.poll(() => held.requests.length).toBe(1);
  await sleep(50);
  // No snap-back: 50 ms after the drop, the answer still held back, the item is where it was dropped.
  expect(await ids(list)).toEqual(expected);
  const body = held.requests[0]?.postDataJSON() as { method: string; payload: unknown; expect: unknown };
  expect(body.method).toBe('reorder');
  expect(body.payload).toEqual(expected.map((value, i) => ({ order: i + 1, value })));
  expect(Object.keys((body.payload as object[])[0] ?? {})).toEqual(['order', 'value']);
  expect(typeof (body.expect as { version: unknown }).version).toBe('number');

  const answered = page.waitForResponse(`**/components/ranking`);
  held.release();
  expect((await answered).status()).toBe(200);
  await expect(page.locator('[data-sortable][data-sort-ready="true"]')).toHaveCount(1);
  await page.unroute('**/components/ranking');
  await ready(page, `${server.url}/ranking`);
  expect(await ids(page.locator('[data-sortable-list="ranking"]'))).toEqual(expected);
  await expect(page.locator('[data-sortable-list="ranking"] [data-rank]').first()).toHaveText('1');
});

test('ranking: the keyboard moves an item, sends the same shape and announces it', async ({
  page,
  server,
}) => {
  const { list, before } = await signedInRanking(page, server);
  const second = list.locator(':scope > .sortable-item').nth(1);
  const name = (await second.getAttribute('data-name')) ?? '';
  const request = page.waitForRequest('**/components/ranking');
  const answered = page.waitForResponse('**/components/ranking');
  await second.locator('[data-drag-handle]').focus();
  await page.keyboard.press('ArrowUp');
  const body = (await request).postDataJSON() as { payload: unknown };
  const expected = [before[1], before[0], ...before.slice(2)];
  expect(body.payload).toEqual(expected.map((value, i) => ({ order: i + 1, value })));
  await expect(page.locator('[data-sort-status]')).toHaveText(
    `${name} moved to position 1 of ${before.length}.`,
  );
  // The status is said as the item moves; the reload must wait for the save's answer, or it cancels the
  // save on its way (a busy machine once reloaded first: the request was never answered).
  expect((await answered).status()).toBe(200);
  await expect(page.locator('[data-sortable][data-sort-ready="true"]')).toHaveCount(1);
  await ready(page, `${server.url}/ranking`);
  expect(await ids(page.locator('[data-sortable-list="ranking"]'))).toEqual(expected);
});

test('ranking: keys pressed while a move saves are not lost: they show at once and are saved next', async ({
  page,
  server,
}) => {
  const { list, before } = await signedInRanking(page, server);
  const first = list.locator(`:scope > .sortable-item[data-id="${before[0]}"]`);
  const name = (await first.getAttribute('data-name')) ?? '';
  const held = await holdAnswers(page, 'ranking');
  await first.locator('[data-drag-handle]').focus();
  // Three quick presses; the first move's answer is held, so the next two come while it saves.
  await page.keyboard.press('ArrowDown');
  await expect.poll(() => held.requests.length).toBe(1);
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  const moved = [...before.slice(1, 4), before[0], ...before.slice(4)];
  expect(await ids(list)).toEqual(moved);
  await expect(page.locator('[data-sort-status]')).toHaveText(
    `${name} moved to position 4 of ${before.length}.`,
  );
  await expect(first.locator('[data-rank]')).toHaveText('4');
  held.release();
  // The held move, then the two pressed meanwhile as one move from it.
  await expect.poll(() => held.requests.length).toBe(2);
  const sent = held.requests.map((r) => (r.postDataJSON() as { payload: { value: string }[] }).payload);
  expect(sent[0]?.map((item) => item.value)).toEqual([before[1], before[0], ...before.slice(2)]);
  expect(sent[1]?.map((item) => item.value)).toEqual(moved);
  await expect(page.locator('[data-sortable]:not([data-saving])')).toHaveCount(1);
  await ready(page, `${server.url}/ranking`);
  expect(await ids(page.locator('[data-sortable-list="ranking"]'))).toEqual(moved);
});

test('ranking: after a move each grip names its new rank, as the numbers on screen do', async ({
  page,
  server,
}) => {
  const { list } = await signedInRanking(page, server);
  const items = list.locator(':scope > .sortable-item');
  const grips = () =>
    items.evaluateAll((lis) =>
      lis.map((li) => li.querySelector('[data-drag-handle]')?.getAttribute('aria-label') ?? ''),
    );
  const shown = () =>
    items.evaluateAll((lis) =>
      lis.map(
        (li) => `Move ${li.getAttribute('data-name')}, rank ${li.querySelector('[data-rank]')?.textContent}`,
      ),
    );
  const third = items.nth(2);
  const name = (await third.getAttribute('data-name')) ?? '';
  await third.locator('[data-drag-handle]').focus();
  await page.keyboard.press('ArrowUp');
  await expect(page.locator('[data-sort-status]')).toContainText(`${name} moved to position 2`);
  await expect(page.locator('[data-sortable][data-sort-ready="true"]')).toHaveCount(1);
  // The focused grip is what a screen reader reads: it was still 'rank 3' at position 2.
  await expect(page.locator(':focus')).toHaveAttribute('aria-label', `Move ${name}, rank 2`);
  expect(await grips()).toEqual(await shown());

  // A mouse drag too: the first item to the bottom.
  await drag(page, items.first().locator('[data-drag-handle]'), items.last(), 'below');
  await expect(page.locator('[data-sortable][data-sort-ready="true"]')).toHaveCount(1);
  await expect.poll(grips).toEqual(await shown());
});

test('segments: drags within and between segments and of a segment send the grouped shape', async ({
  page,
  server,
}) => {
  await signIn(page, server.url);
  await ready(page, `${server.url}/segments`);
  const groups = page.locator('[data-sortable-groups] > .sortable-group');
  const board = () =>
    page.locator('[data-sortable-groups] > .sortable-group').evaluateAll((els) =>
      els.map((g) => ({
        value: (g as HTMLElement).dataset.id ?? '',
        items: [...g.querySelectorAll<HTMLElement>('.sortable-item')].map((li) => li.dataset.id ?? ''),
      })),
    );
  const shape = (b: { value: string; items: string[] }[]) =>
    b.map((g, i) => ({
      order: i + 1,
      value: g.value,
      items: g.items.map((value, j) => ({ order: j + 1, value })),
    }));
  const send = async (act: () => Promise<void>) => {
    const request = page.waitForRequest('**/components/segments');
    const response = page.waitForResponse('**/components/segments');
    await act();
    const body = (await request).postDataJSON() as { method: string; payload: unknown };
    // Our own change comes back as a live update too: let that re-render land before the next drag.
    await waitForLiveMark(page, (await (await response).json()) as AnsweredChange);
    await page.waitForLoadState('networkidle');
    await expect(page.locator('[data-sortable][data-sort-ready="true"]')).toHaveCount(1);
    return body;
  };

  // Within a segment: the second item of the first non-trivial segment to the top.
  const start = await board();
  const g = start.findIndex((x) => x.items.length >= 2);
  expect(g).toBeGreaterThanOrEqual(0);
  const column = groups.nth(g).locator('.sortable-item');
  let body = await send(() => drag(page, column.nth(1).locator('[data-drag-handle]'), column.first()));
  const within = start.map((x, i) =>
    i === g ? { ...x, items: [x.items[1] as string, x.items[0] as string, ...x.items.slice(2)] } : x,
  );
  expect(body.method).toBe('reorganize');
  expect(body.payload).toEqual(shape(within));
  expect(await board()).toEqual(within);

  // Between segments: that item to the top of the next segment.
  const into = (g + 1) % within.length;
  const moving = within[g]?.items[0] as string;
  body = await send(() =>
    drag(
      page,
      page.locator(`.sortable-item[data-id="${moving}"] [data-drag-handle]`),
      groups.nth(into).locator('.sortable-item').first(),
    ),
  );
  const between = within.map((x, i) =>
    i === g ? { ...x, items: x.items.slice(1) } : i === into ? { ...x, items: [moving, ...x.items] } : x,
  );
  expect(body.payload).toEqual(shape(between));
  expect(await board()).toEqual(between);

  // A segment: the last one to the front.
  const last = groups.nth(between.length - 1);
  body = await send(() => drag(page, last.locator('[data-drag-handle="group"]'), groups.first()));
  const segmentMoved = [between.at(-1), ...between.slice(0, -1)] as typeof between;
  expect(body.payload).toEqual(shape(segmentMoved));

  await ready(page, `${server.url}/segments`);
  expect(await board()).toEqual(segmentMoved);
});

test('a stale drop from a second browser is refused, and the list reloads to the current order', async ({
  page,
  browser,
  server,
}) => {
  await signIn(page, server.url);
  const editor = await newUser(page, server, 'editor');
  await ready(page, `${server.url}/ranking`);
  const other = await signedIn(browser, server, editor);
  try {
    await ready(other.page, `${server.url}/ranking`);
    const mine = page.locator('[data-sortable-list="ranking"]');
    const top = await boxOf(mine.locator(':scope > .sortable-item').first());
    await startDrag(page, mine.locator(':scope > .sortable-item').nth(2).locator('[data-drag-handle]'));
    // The other browser drops first.
    const theirs = other.page.locator('[data-sortable-list="ranking"]');
    const before = await ids(theirs);
    const answered = other.page.waitForResponse('**/components/ranking');
    await drag(
      other.page,
      theirs.locator(':scope > .sortable-item').nth(3).locator('[data-drag-handle]'),
      theirs.locator(':scope > .sortable-item').first(),
    );
    expect((await answered).status()).toBe(200);
    const current = [before[3], ...before.filter((_, i) => i !== 3)];
    // The items that are moving when the current list is swapped in after the refusal (the slide back).
    await page.evaluate(() => {
      const w = window as { __slid?: string[][] };
      w.__slid = [];
      new MutationObserver((records) => {
        for (const node of records.flatMap((r) => [...r.addedNodes])) {
          if (!(node instanceof HTMLElement) || node.id !== 'ranking-region') continue;
          const items = [...node.querySelectorAll<HTMLElement>('.sortable-item')];
          w.__slid?.push(
            items.filter((el) => el.getAnimations().length > 0).map((el) => el.dataset.id ?? ''),
          );
        }
      }).observe(document.body, { childList: true, subtree: true });
    });
    const dropped = (await ids(mine))[2];
    const refused = page.waitForResponse('**/components/ranking');
    await finishDrag(page, top);

    // Meanwhile this page had started a drag: the live update waits until the drop, so the drop is stale.
    const answer = await refused;
    expect(answer.status()).toBe(409);
    expect(((await answer.json()) as { message: string }).message).toMatch(
      /^Drag editor moved .+ from #4 to #1 after you loaded this list/,
    );
    await expect(page.locator('[data-notices]')).toContainText('Drag editor moved');
    // It animates back: right after the refusal the swapped-in items are sliding, the dropped one too
    // (from where it was dropped to where the server has it)...
    const slid = () => page.evaluate(() => (window as { __slid?: string[][] }).__slid ?? []);
    await expect.poll(async () => (await slid()).length).toBeGreaterThan(0);
    expect((await slid())[0]).toContain(dropped);
    // ...and ends in the server's order, with nothing left moving.
    await expect.poll(() => ids(mine)).toEqual(current);
    await expect.poll(() => mine.evaluate((list) => list.getAnimations({ subtree: true }).length)).toBe(0);
    const served = await (await page.request.get(`${server.url}/ranking`)).text();
    expect([...served.matchAll(/<li class="sortable-item" data-id="([^"]+)"/g)].map((m) => m[1])).toEqual(
      current,
    );
    await expect(page.locator('[data-sortable][data-sort-ready="true"]')).toHaveCount(1);
  } finally {
    await other.close();
  }
});

test('a viewer sees no handles but is told why, and a forged reorder is refused', async ({
  page,
  browser,
  server,
}) => {
  await signIn(page, server.url);
  const viewer = await signedIn(browser, server, await newUser(page, server, 'viewer'));
  const readOnly = /^You can view the (ranking|board); editors and admins change it\.$/;
  try {
    for (const path of ['/ranking', '/segments']) {
      await viewer.page.goto(`${server.url}${path}`);
      await expect(viewer.page.locator('html')).toHaveAttribute('data-ready', 'true');
      await expect(viewer.page.locator('.sortable-item').first()).toBeVisible();
      await expect(viewer.page.locator('[data-drag-handle]')).toHaveCount(0);
      await expect(viewer.page.locator('.move-buttons')).toHaveCount(0);
      await expect(viewer.page.getByText(readOnly)).toBeVisible();
      // Those who may move things get the instructions instead.
      await page.goto(`${server.url}${path}`);
      await expect(page.locator('[data-drag-handle]').first()).toBeVisible();
      await expect(page.getByText(readOnly)).toHaveCount(0);
    }
    await viewer.page.goto(`${server.url}/ranking`);
    const list = await ids(viewer.page.locator('[data-sortable-list="ranking"]'));
    const token = (await viewer.page.locator('meta[name="csrf-token"]').getAttribute('content')) ?? '';
    const forged = await viewer.page.request.post(`${server.url}/components/ranking`, {
      headers: { 'X-Requested-With': 'XMLHttpRequest', 'X-CSRF-Token': token },
      data: {
        method: 'reorder',
        payload: [...list].reverse().map((value, i) => ({ order: i + 1, value })),
        expect: { version: 0 },
      },
    });
    expect(forged.status()).toBe(403);
    await viewer.page.reload();
    expect(await ids(viewer.page.locator('[data-sortable-list="ranking"]'))).toEqual(list);
  } finally {
    await viewer.close();
  }
});
