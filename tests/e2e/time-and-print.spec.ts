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

/**
 * "26 Nov 2026, 13:10 GMT+9": what the pages write for a moment in a zone; with `seconds`, what the
 * history writes, to the second ("26 Nov 2026, 13:10:05 GMT+9").
 */
const inZone = (iso: string, timeZone: string, seconds = false) => {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    ...(seconds ? { second: '2-digit' } : {}),
    hourCycle: 'h23',
    timeZoneName: 'short',
  }).formatToParts(new Date(iso));
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  const time = `${part('hour')}:${part('minute')}${seconds ? `:${part('second')}` : ''}`;
  return `${part('day')} ${part('month')} ${part('year')}, ${time} ${part('timeZoneName')}`;
};
const inZoneToSecond = (iso: string, timeZone: string) => inZone(iso, timeZone, true);

/**
 * What a datetime-local field holds for a moment on a wall clock in `timeZone`, to the second; as the
 * field itself writes it, without ":00" seconds.
 */
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
    .replace(' ', 'T')
    .replace(/:00$/, '');

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
    // The first page after signing in already writes Tokyo time (the sign-in page told the server).
    await expect(page.locator('#competitors-table tbody time').first()).toHaveText(/ GMT\+9$/);
    const id = await addCompetitor(page, server.url, `Tokyo Time ${Date.now()}`);
    await putNote(page, server.url, id, 'pricing', 'First price list');
    await gotoReady(page, `${server.url}/competitors/${id}/history`);
    const firstAt =
      (await page.locator('[data-history-entry="pricing:1"] time').getAttribute('datetime')) ?? '';
    // The moment to ask about: the second the history lists the first edit at (read through its end), before
    // the second edit.
    const asOf = new Date(Math.floor(Date.parse(firstAt) / 1000) * 1000);
    await expect.poll(() => Date.now() >= asOf.getTime() + 1000).toBe(true);
    await putNote(page, server.url, id, 'pricing', 'Second price list');

    await gotoReady(page, `${server.url}/competitors/${id}/history`);
    // Each change says when on the viewer's clock, to the second, with its zone.
    await expect(page.locator('[data-history-entry="pricing:1"] time')).toHaveText(
      inZoneToSecond(firstAt, 'Asia/Tokyo'),
    );
    const field = page.getByLabel('As of (Asia/Tokyo)');
    await field.fill(wallClock(asOf, 'Asia/Tokyo'));
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    await expect(page.locator('.as-of [data-note-card="pricing"] [data-note-text]')).toHaveText(
      'First price list',
    );
    await expect(page.locator('.as-of .historical-banner')).toContainText(
      inZoneToSecond(asOf.toISOString(), 'Asia/Tokyo'),
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
      inZoneToSecond(asOf.toISOString(), 'America/Los_Angeles'),
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

  test('each history row says its second and opens the card as of that change; two versions in one minute stay apart', async ({
    page,
    server,
  }) => {
    await signIn(page, server.url);
    const id = await addCompetitor(page, server.url, `Second ${Date.now()}`);
    await putNote(page, server.url, id, 'pricing', 'First price list');
    await gotoReady(page, `${server.url}/competitors/${id}/history`);
    const firstAt =
      (await page.locator('[data-history-entry="pricing:1"] time').getAttribute('datetime')) ?? '';
    // The second edit in a later second (most often the same minute, which the rows used to show alone).
    await expect.poll(() => Date.now() >= Math.floor(Date.parse(firstAt) / 1000) * 1000 + 1000).toBe(true);
    await putNote(page, server.url, id, 'pricing', 'Second price list');
    await gotoReady(page, `${server.url}/competitors/${id}/history`);
    const secondAt =
      (await page.locator('[data-history-entry="pricing:2"] time').getAttribute('datetime')) ?? '';
    const row = (version: number) => page.locator(`[data-history-entry="pricing:${version}"]`);
    await expect(row(1).locator('time')).toHaveText(inZoneToSecond(firstAt, 'Asia/Tokyo'));
    await expect(row(2).locator('time')).toHaveText(inZoneToSecond(secondAt, 'Asia/Tokyo'));

    // From the first version's row to the card as it was then: that version, not the later one.
    await row(1).getByRole('link', { name: 'Battlecard as of this change' }).click();
    const card = page.locator('.as-of [data-note-card="pricing"] [data-note-text]');
    await expect(card).toHaveText('First price list');
    // The banner and the field say the very second the row says, on the same clock.
    await expect(page.locator('.as-of .historical-banner')).toContainText(
      `as it was at ${inZoneToSecond(firstAt, 'Asia/Tokyo')}, with every change listed at or before that second`,
    );
    const field = page.getByLabel('As of (Asia/Tokyo)');
    await expect(field).toHaveValue(wallClock(new Date(firstAt), 'Asia/Tokyo'));
    await expect(row(2)).toContainText('made after the moment shown above');
    await expect(row(1)).not.toContainText('made after the moment shown above');

    // The second version's link shows it; the field, submitted again as it is, the same card.
    await row(2).getByRole('link', { name: 'Battlecard as of this change' }).click();
    await expect(card).toHaveText('Second price list');
    await expect(field).toHaveValue(wallClock(new Date(secondAt), 'Asia/Tokyo'));
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    await expect(page).toHaveURL(/[?&]asOf=/);
    await expect(card).toHaveText('Second price list');

    // A time typed without seconds is read as its :00 (the field shows it so), and the banner says so.
    const minute = wallClock(new Date(firstAt), 'Asia/Tokyo').slice(0, 16);
    await field.fill(minute);
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    await expect(page.locator('.as-of .historical-banner')).toContainText(
      inZoneToSecond(`${new Date(firstAt).toISOString().slice(0, 16)}:00Z`, 'Asia/Tokyo'),
    );
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
  test('an "as of" that has not come yet shows the card as it is now, and says so', async ({
    page,
    server,
  }) => {
    await signIn(page, server.url);
    const id = await addCompetitor(page, server.url, `Future ${Date.now()}`);
    await putNote(page, server.url, id, 'general', 'Current note');
    const nextYear = new Date().getUTCFullYear() + 1;
    await gotoReady(page, `${server.url}/competitors/${id}/history?asOf=${nextYear}-06-01T09:00`);
    const banner = page.locator('.as-of .historical-banner');
    await expect(banner).toHaveText(
      `1 Jun ${nextYear}, 09:00:00 GMT+9 has not come yet: this is the battlecard as it is now.`,
    );
    await expect(page.locator('.as-of [data-note-card="general"] [data-note-text]')).toHaveText(
      'Current note',
    );
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

test.describe('printing', () => {
  type Printed = Window & { __printedHtml?: string };

  test('the printed battlecard names the competitor, and long text is wrapped, not cut, at A4 and Letter', async ({
    page,
    server,
  }) => {
    await page.addInitScript(() => {
      // window.print blocks in a real browser: keep what was printed and stop the reload that follows.
      const w = window as Printed;
      w.print = () => {
        w.__printedHtml = document.body.innerHTML;
        throw new Error('printed');
      };
    });
    await signIn(page, server.url);
    const name = `${'W'.repeat(80)}مرحبا🚀${Date.now()}`.slice(0, 120);
    const id = await addCompetitor(page, server.url, name);
    const long = 'Strong renewal pricing 🚀 شركة منافسة قوية في السوق '.repeat(400).slice(0, 9_990);
    for (const column of ['strengths', 'weaknesses', 'pricing', 'general'])
      await putNote(page, server.url, id, column, `${long}\nEND-${column}`);
    await gotoReady(page, `${server.url}/competitors/${id}`);
    page.on('pageerror', () => undefined);
    await page.getByRole('button', { name: 'Print battlecard' }).click();
    await expect.poll(() => page.evaluate(() => (window as Printed).__printedHtml ?? '')).not.toBe('');
    await page.evaluate(() => (document.body.innerHTML = (window as Printed).__printedHtml ?? ''));
    await page.emulateMedia({ media: 'print' });
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(name);
    for (const width of [718, 740]) {
      // A4 and Letter less the print dialog's default margins.
      await page.setViewportSize({ width, height: 1000 });
      const clipped = await page.evaluate(() =>
        [...document.body.querySelectorAll('*')]
          .filter(
            (e) =>
              e.clientWidth > 1 &&
              e.scrollWidth > e.clientWidth + 1 &&
              getComputedStyle(e).overflowX !== 'visible',
          )
          .map((e) => e.outerHTML.slice(0, 80)),
      );
      expect(clipped).toEqual([]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    }
  });

  test('a printed table shows every column on the page instead of cutting them off in a scroll box', async ({
    page,
    server,
  }) => {
    await signIn(page, server.url);
    await addCompetitor(page, server.url, `${'N'.repeat(100)}${Date.now()}`.slice(0, 120));
    for (const path of ['/competitors', '/audit', '/users']) {
      await page.emulateMedia({ media: 'screen' });
      await gotoReady(page, `${server.url}${path}`);
      await page.emulateMedia({ media: 'print' });
      await page.setViewportSize({ width: 718, height: 1000 });
      const clipped = await page.evaluate(() =>
        [...document.querySelectorAll('main *')]
          .filter(
            (e) =>
              e.clientWidth > 1 &&
              e.scrollWidth > e.clientWidth + 1 &&
              getComputedStyle(e).overflowX !== 'visible',
          )
          .map((e) => `${e.className}: ${e.scrollWidth} > ${e.clientWidth}`),
      );
      expect(clipped, path).toEqual([]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth), path).toBeLessThanOrEqual(718);
      // No text runs past the paper's edge (text cut short on purpose, with an ellipsis, aside).
      const pastTheEdge = await page.evaluate(() => {
        const walker = document.createTreeWalker(
          document.querySelector('main') ?? document.body,
          NodeFilter.SHOW_TEXT,
        );
        const past: string[] = [];
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const parent = node.parentElement;
          if (!parent || parent.closest('.sr-only') || !node.textContent?.trim()) continue;
          if (getComputedStyle(parent).textOverflow === 'ellipsis') continue;
          const range = document.createRange();
          range.selectNodeContents(node);
          const { right, width } = range.getBoundingClientRect();
          if (width > 0 && right > document.documentElement.clientWidth + 1)
            past.push(node.textContent.slice(0, 40));
        }
        return past;
      });
      expect(pastTheEdge, path).toEqual([]);
      // Controls that do nothing on paper are left out.
      for (const control of ['Search', 'Add competitor', 'Next'])
        await expect(
          page.getByRole('button', { name: control }).or(page.getByRole('link', { name: control })),
        ).toBeHidden();
    }
  });
});
