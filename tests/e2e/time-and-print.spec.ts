import type { Page } from '@playwright/test';
import { addCompetitor, putNote } from './support/competitors.ts';
import { expect, test } from './support/fixtures.ts';
import { signIn } from './support/sign-in.ts';

/*
 * Times as a user in another time zone meets them, and printing as a user prints. Every browser here sets
 * its own time zone and locale, so nothing depends on the machine's.
 */

const gotoReady = async (page: Page, url: string) => {
  await page.goto(url);
  await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
};

/** "26 Nov 2026, 13:10 GMT+9": what the pages write for a moment in a zone. */
const inZone = (iso: string, timeZone: string) => {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'short',
  }).formatToParts(new Date(iso));
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('day')} ${part('month')} ${part('year')}, ${part('hour')}:${part('minute')} ${part('timeZoneName')}`;
};

/** What a datetime-local field holds for a moment on a wall clock in `timeZone`, to the second. */
const wallClock = (at: Date, timeZone: string) =>
  new Intl.DateTimeFormat('sv-SE', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  })
    .format(at)
    .replace(' ', 'T');

test.describe('in Tokyo', () => {
  test.use({ timezoneId: 'Asia/Tokyo', locale: 'ja-JP' });

  test('"as of" a time typed on a Tokyo wall clock shows the card at that moment, and times read in Tokyo time', async ({
    page,
    server,
    browser,
  }) => {
    const errors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    page.on('pageerror', (e) => errors.push(e.message));
    await signIn(page, server.url);
    const id = await addCompetitor(page, server.url, `Tokyo Time ${Date.now()}`);
    await putNote(page, server.url, id, 'pricing', 'First price list');
    await gotoReady(page, `${server.url}/competitors/${id}/history`);
    const firstAt =
      (await page.locator('[data-history-entry="pricing:1"] time').getAttribute('datetime')) ?? '';
    // The moment to ask about: the whole second after the first edit, before the second edit.
    const asOf = new Date(Math.ceil((Date.parse(firstAt) + 1) / 1000) * 1000);
    await expect.poll(() => Date.now() > asOf.getTime()).toBe(true);
    await putNote(page, server.url, id, 'pricing', 'Second price list');

    await gotoReady(page, `${server.url}/competitors/${id}/history`);
    // Each change says when on the viewer's clock, with its zone.
    await expect(page.locator('[data-history-entry="pricing:1"] time')).toHaveText(
      inZone(firstAt, 'Asia/Tokyo'),
    );
    const field = page.getByLabel('As of (Asia/Tokyo)');
    await field.fill(wallClock(asOf, 'Asia/Tokyo'));
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    await expect(page.locator('.as-of [data-note-card="pricing"] [data-note-text]')).toHaveText(
      'First price list',
    );
    await expect(page.locator('.as-of .historical-banner')).toContainText(
      inZone(asOf.toISOString(), 'Asia/Tokyo'),
    );
    await expect(field).toHaveValue(wallClock(asOf, 'Asia/Tokyo'));

    // The address names the zone, so a colleague in Los Angeles who opens it sees the same moment.
    const shared = page.url();
    expect(shared).toContain('tz=Asia%2FTokyo');
    const la = await browser.newContext({ timezoneId: 'America/Los_Angeles', locale: 'en-US' });
    const colleague = await la.newPage();
    await signIn(colleague, server.url);
    await gotoReady(colleague, shared);
    await expect(colleague.locator('.as-of [data-note-card="pricing"] [data-note-text]')).toHaveText(
      'First price list',
    );
    await expect(colleague.locator('.as-of .historical-banner')).toContainText(
      inZone(asOf.toISOString(), 'America/Los_Angeles'),
    );
    await la.close();

    // The battlecard and the table say when on the same clock; the server's text is what the browser keeps.
    await gotoReady(page, `${server.url}/competitors/${id}`);
    const updated = page.locator('.battlecard__facts time');
    await expect(updated).toHaveText(inZone((await updated.getAttribute('datetime')) ?? '', 'Asia/Tokyo'));
    await gotoReady(page, `${server.url}/audit`);
    const newest = page.locator('#audit-table tbody time').first();
    await expect(newest).toHaveText(inZone((await newest.getAttribute('datetime')) ?? '', 'Asia/Tokyo'));
    expect(errors).toEqual([]);
  });

  test('an "as of" in a zone that does not exist is refused with a clear message, not a 500', async ({
    page,
    server,
  }) => {
    await signIn(page, server.url);
    const id = await addCompetitor(page, server.url, `Bad Zone ${Date.now()}`);
    const response = await page.goto(
      `${server.url}/competitors/${id}/history?asOf=2026-11-26T10:00&tz=Mars%2FOlympus_Mons`,
    );
    expect(response?.status()).toBe(400);
    await expect(page.getByRole('alert')).toContainText('“Mars/Olympus_Mons” is not a time zone');
  });
  test("/ops says on the viewer's clock since when its figures stopped updating", async ({
    page,
    server,
  }) => {
    await signIn(page, server.url);
    await gotoReady(page, `${server.url}/ops`);
    await page.route(
      (url) => url.pathname === '/ops',
      (route) =>
        route.request().headers()['x-requested-with'] === 'XMLHttpRequest'
          ? route.abort('failed')
          : route.continue(),
    );
    const notice = page.getByText(/stopped updating/);
    await expect(notice).toBeVisible({ timeout: 12_000 });
    await expect(notice).toContainText(/stopped updating at \d{2}:\d{2}:\d{2} GMT\+9:/);
  });
});
