import { randomBytes } from 'node:crypto';
import type { Locator, Page, Request, Route } from '@playwright/test';
import { expect, serverFixture, test as base } from './support/fixtures.ts';
import type { RunningServer } from './support/server.ts';
import { addCompetitor, deleteCompetitor } from './support/competitors.ts';
import { signIn } from './support/sign-in.ts';

/**
 * A retry is normal: the server handles a change, its answer never reaches the browser (a dropped
 * connection, a proxy timeout), and the browser sends the same call again with the same key. The
 * change must happen once, and the user must see it saved, not an error and not a duplicate.
 */

const isNoteCall = (request: Request) =>
  request.method() === 'POST' && new URL(request.url()).pathname === '/components/competitor-notes';

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

// A server (and so a worker) of this spec's own: the reorder below must not move other specs' rows.
const test = base.extend<object, { server: RunningServer }>({ server: serverFixture });
test.describe.configure({ mode: 'serial', timeout: 90_000 });

const rankingIds = (list: Locator) =>
  list
    .locator(':scope > .sortable-item')
    .evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.id ?? ''));

async function readyRanking(page: Page, url: string): Promise<Locator> {
  await page.goto(`${url}/ranking`);
  await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
  await expect(page.locator('[data-sortable][data-sort-ready="true"]')).toHaveCount(1);
  return page.locator('[data-sortable-list="ranking"]');
}

test('update-note whose answer is lost: the browser resends it with the same key, it is saved once and shown saved', async ({
  page,
  server,
}) => {
  await signIn(page, server.url);
  const name = `Lost Answer ${randomBytes(4).toString('hex')}`;
  const id = await addCompetitor(page, server.url, name);
  await page.goto(`${server.url}/competitors?search=${encodeURIComponent(name)}`);
  await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');

  const calls: Request[] = [];
  page.on('request', (request) => {
    if (isNoteCall(request)) calls.push(request);
  });
  const lost = await loseFirstAnswer(page, '**/components/competitor-notes');

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
  const keys = await Promise.all(calls.map(async (c) => (await c.allHeaders())['idempotency-key']));
  expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
  expect(keys[1]).toBe(keys[0]);

  // The user sees it saved, once: version 1, not 2.
  await expect(dialog).toBeHidden();
  await expect(page.getByRole('status').filter({ hasText: 'Saved the pricing note.' })).toBeVisible();
  await expect(pricing).toHaveAttribute('data-value', text);
  await expect(pricing).toHaveAttribute('data-version', '1');

  // One version in the history, one entry in the audit log.
  await page.unroute('**/components/competitor-notes');
  await page.goto(`${server.url}/competitors/${id}/history`);
  await expect(page.locator('[data-history-entry]')).toHaveCount(1);
  await expect(page.locator('[data-history-entry="pricing:1"]')).toBeVisible();
  await page.goto(`${server.url}/audit?search=${encodeURIComponent(name)}`);
  await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
  await expect(page.locator('tbody tr').filter({ hasText: 'CompetitorNoteUpdated' })).toHaveCount(1);

  await deleteCompetitor(page, server.url, id);
});

test('a reorder whose answer is lost: resent with the same key, applied once (one version later), and the order stays', async ({
  page,
  server,
}) => {
  await signIn(page, server.url);
  let list = await readyRanking(page, server.url);
  const before = await rankingIds(list);
  const lost = await loseFirstAnswer(page, '**/components/ranking');
  const sent: Request[] = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && new URL(r.url()).pathname === '/components/ranking') sent.push(r);
  });
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
  expect((await sent[1]?.allHeaders())?.['idempotency-key']).toBe(
    (await sent[0]?.allHeaders())?.['idempotency-key'],
  );
  // Applied once: had the resend been applied again, it would have been refused as stale (or been a
  // second version).
  expect(answer.status).toBe('accepted');
  expect(answer.version).toBe((first?.expect.version ?? 0) + 1);
  await expect(page.locator('[data-sortable][data-sort-ready="true"]')).toHaveCount(1);

  const expected = [before[1], before[0], ...before.slice(2)];
  await page.unroute('**/components/ranking');
  list = await readyRanking(page, server.url);
  expect(await rankingIds(list)).toEqual(expected);
});
