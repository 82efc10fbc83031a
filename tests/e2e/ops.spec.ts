import { randomUUID } from 'node:crypto';
import { test as base, expect } from '@playwright/test';
import pg from 'pg';
import { DeadLetterStore } from '#events/store/dead-letters.ts';
import { runs } from '#tests/support/environment.ts';
import { addCompetitorCommand, envelope } from '#tests/support/runtime-pieces.ts';
import { signIn } from './support/sign-in.ts';
import type { RunningServer } from './support/server.ts';
import { serverFixtureWith } from './support/fixtures.ts';
import { expectNoViolations } from './support/axe.ts';

/**
 * /ops in a real browser, on Postgres, where a test can put a dead letter in the server's database (a
 * command that fails five times cannot be made from the UI; the embedded database lives in the server).
 */
const test = base.extend<object, { server: RunningServer }>({
  server: serverFixtureWith({ backend: 'postgres' }),
});

test.skip(!runs('postgres'), 'RIVALS_TEST_SKIP leaves out Postgres');

/** A dead letter as a worker leaves it after too many failures; its id. */
async function deadLetter(server: RunningServer, name: string): Promise<string> {
  const pool = new pg.Pool({ connectionString: server.databaseUrl, max: 1 });
  try {
    const letter = envelope(addCompetitorCommand(name, { threat: 'low' }), {
      actor: { id: 'system', name: 'System' },
    });
    const letters = new DeadLetterStore(pool);
    await letters.add({
      busEntryId: `${Date.now()}-0`,
      envelope: letter,
      error: 'handler threw: boom',
      deliveryCount: 5,
    });
    const added = (await letters.list(1_000)).find((d) => d.envelope?.commandId === letter.commandId);
    if (!added) throw new Error('the dead letter was not stored');
    return added.id;
  } finally {
    await pool.end();
  }
}

test('Retry confirmed while the page refreshes itself is sent, not dropped', async ({ page, server }) => {
  const name = `Dead ${randomUUID().slice(0, 8)}`;
  const id = await deadLetter(server, name);
  await signIn(page, server.url);
  await page.goto(`${server.url}/ops`);
  await expect(page.getByRole('cell', { name: /AddCompetitor/ })).toBeVisible();

  // The next self-refresh of the status region is slow (a busy server): it lands while the dialog is open.
  let refreshed!: () => void;
  const landed = new Promise<void>((resolve) => (refreshed = resolve));
  await page.route(`${server.url}/ops`, async (route) => {
    if (route.request().headers()['x-requested-with'] !== 'XMLHttpRequest') return route.continue();
    const response = await route.fetch();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await route.fulfill({ response });
    refreshed();
  });
  await page.waitForRequest(
    (r) => r.url() === `${server.url}/ops` && r.headers()['x-requested-with'] === 'XMLHttpRequest',
  );
  await page.getByRole('button', { name: 'Retry' }).click();
  await expect(page.getByRole('dialog')).toContainText('It is sent to the workers once more.');
  await landed;
  await page.waitForTimeout(200);
  const retried = page.waitForRequest(
    (r) => r.method() === 'POST' && r.url() === `${server.url}/ops/dead-letters/${id}/retry`,
    { timeout: 5_000 },
  );
  await page.getByRole('button', { name: 'Yes, retry it' }).click();
  await retried;
  await expect(page.getByText('Sent AddCompetitor to the workers again.')).toBeVisible();
  await page.goto(`${server.url}/competitors?search=${encodeURIComponent(name)}&sort=&page=1&perPage=15`);
  await expect(page.getByRole('cell', { name, exact: true })).toBeVisible();
});

test('when the self-refresh stops working, /ops says its figures are no longer current', async ({
  page,
  server,
}) => {
  await signIn(page, server.url);
  await page.goto(`${server.url}/ops`);
  await expect(page.getByRole('heading', { name: 'Projections' })).toBeVisible();
  const notice = page.getByText(/stopped updating/);
  await expect(notice).toHaveCount(0);
  // The server stops answering the refresh (down, or the network between): the last figures stay.
  const refresh = (url: URL) => url.pathname === '/ops';
  await page.route(refresh, (route) =>
    route.request().headers()['x-requested-with'] === 'XMLHttpRequest'
      ? route.abort('failed')
      : route.continue(),
  );
  await expect(notice).toBeVisible({ timeout: 12_000 });
  await expect(notice).toContainText('the server did not answer');
  // Answering again: the notice goes.
  await page.unroute(refresh);
  await expect(notice).toHaveCount(0, { timeout: 12_000 });
  // Answering, but no longer for this person (signed out elsewhere): said so, with what to do.
  await page.context().clearCookies();
  await expect(notice).toBeVisible({ timeout: 12_000 });
  await expect(notice).toContainText('Reload the page');
});

test('the Discard and Retry confirmations put focus on Cancel: a second Enter keeps the dead letter', async ({
  page,
  server,
}) => {
  const name = `Dead Keys ${randomUUID().slice(0, 8)}`;
  const id = await deadLetter(server, name);
  await signIn(page, server.url);
  // The region refreshing every second instead of every 5 s: a refresh meets a dialog's closing in most
  // runs (SweetAlert gives focus back to its opener 100 ms after the dialog has gone).
  await page.route(`${server.url}/ops`, async (route) => {
    const response = await route.fetch();
    const body = (await response.text()).replace('data-refresh-every="5000"', 'data-refresh-every="1000"');
    await route.fulfill({ response, body });
  });
  await page.goto(`${server.url}/ops`);
  await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
  await expect(page.locator('[data-refresh-every]')).toHaveAttribute('data-refresh-every', '1000');
  const actions = page.locator(`form[action^="/ops/dead-letters/${id}/"]`);
  await expect(actions).toHaveCount(2);
  // /ops with a dead letter listed, and its confirmation open, as axe sees them.
  await expectNoViolations(page, '/ops with a dead letter');
  const sent: string[] = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && r.url().includes('/ops/dead-letters/')) sent.push(r.url());
  });
  const dialog = page.getByRole('dialog');

  // Enter on "Discard", then Enter again (a double press): "It will never be handled" is not undone.
  for (const [button, question] of [
    ['Discard', 'It will never be handled.'],
    ['Retry', 'It is sent to the workers once more.'],
  ] as const) {
    const opener = actions.getByRole('button', { name: button, exact: true });
    await opener.focus();
    await page.keyboard.press('Enter');
    await expect(dialog).toContainText(question);
    await expectNoViolations(page, `the ${button} confirmation`);
    await expect(dialog.getByRole('button', { name: 'Cancel' })).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(dialog).toBeHidden();
    await expect(opener).toBeFocused();
  }
  // A keyboard user resting on Retry while the region refreshes (every few seconds) stays on it: the
  // button is a new element after the refresh, and focus is on that one, not back at the page's start.
  const retry = actions.getByRole('button', { name: 'Retry', exact: true });
  await retry.evaluate((button) => button.setAttribute('data-before-refresh', ''));
  await expect(retry).not.toHaveAttribute('data-before-refresh', { timeout: 12_000 });
  await expect(retry).toBeFocused();
  await page.reload();
  await expect(actions).toHaveCount(2);
  expect(sent).toEqual([]);

  // Discarding by keyboard is one deliberate step away: to "Yes, discard it", then Enter.
  await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
  await actions.getByRole('button', { name: 'Discard', exact: true }).focus();
  await page.keyboard.press('Enter');
  await expect(dialog.getByRole('button', { name: 'Cancel' })).toBeFocused();
  await page.keyboard.press('Shift+Tab');
  await expect(dialog.getByRole('button', { name: 'Yes, discard it' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(actions).toHaveCount(0);
  expect(sent).toEqual([`${server.url}/ops/dead-letters/${id}/discard`]);
});
