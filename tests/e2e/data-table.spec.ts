import type { BrowserContext, Locator, Page, Request, Route } from '@playwright/test';
import { demoCompetitors } from '../../services/bootstrap/demo-competitors.ts';
import { expect, test as base } from './support/fixtures.ts';
import type { RunningServer } from './support/server.ts';
import { signIn } from './support/sign-in.ts';

/**
 * The data table on /competitors in a real browser (issue 5): the sort toggle (docs/behaviour.md §3), refreshes by
 * XHR with all four parameters in the URL, pagination without navigation, history, failure, the
 * search box surviving refreshes, stale responses, no-JavaScript navigation, invalid parameters,
 * page size, empty state, live region and the loading indicator.
 */

/** 40 extra competitors; first words are distinct and none is a prefix of another, so name order is unambiguous. */
const seedWords = [
  'Aurora',
  'Basalt',
  'Cobalt',
  'Delta',
  'Ember',
  'Falcon',
  'Garnet',
  'Harbor',
  'Indigo',
  'Jasper',
  'Lumen',
  'Magnet',
  'Nimbus',
  'Onyx',
  'Prism',
  'Quartz',
  'Raven',
  'Sierra',
  'Tundra',
  'Umber',
  'Vortex',
  'Willow',
  'Xenon',
  'Yonder',
  'Zephyr',
  'Amber',
  'Beacon',
  'Cinder',
  'Dune',
  'Echo',
  'Fjord',
  'Glacier',
  'Hollow',
  'Iris',
  'Jade',
  'Kiln',
  'Lotus',
  'Meadow',
  'Nectar',
  'Pebble',
];
const seededNames = seedWords.map((word) => `${word} Works`);
const segmentIds = ['enterprise', 'mid-market', 'smb', 'emerging'] as const;
const threats = ['low', 'medium', 'high'] as const;
const allNames = [...demoCompetitors.map((c) => c.name), ...seededNames];
const TOTAL = allNames.length; // 46
const byName = (a: string, b: string) => {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
};
const namesAscending = [...allNames].sort(byName);

interface WorkerFixtures {
  /** The worker's server with the 6 demo competitors plus the 40 above (read-only for every test here). */
  seeded: RunningServer;
}

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- worker fixtures only
const test = base.extend<{}, WorkerFixtures>({
  seeded: [
    async ({ server, browser }, provide) => {
      const context = await browser.newContext();
      try {
        await seed(server, context);
      } catch (error) {
        // Say why: the server's own output is the first thing to look at.
        const { stderr, stdout } = server.output();
        throw new Error(`seeding failed: ${(error as Error).message}\n${stderr || stdout}`);
      } finally {
        await context.close();
      }
      await provide(server);
    },
    { scope: 'worker', timeout: 90_000 },
  ],
});

async function seed(server: RunningServer, context: BrowserContext): Promise<void> {
  const page = await context.newPage();
  await signIn(page, server.url);
  const token = (await page.locator('meta[name="csrf-token"]').getAttribute('content')) ?? '';
  for (let i = 0; i < seedWords.length; i += 8) {
    await Promise.all(
      seedWords.slice(i, i + 8).map(async (word, j) => {
        const n = i + j;
        const response = await page.request.post(`${server.url}/competitors/new`, {
          form: {
            _csrf: token,
            name: `${word} Works`,
            website: `https://${word.toLowerCase()}.example.test`,
            segmentId: segmentIds[n % segmentIds.length] ?? 'smb',
            threat: threats[n % threats.length] ?? 'low',
            headquarters: 'Testville',
          },
          maxRedirects: 0,
        });
        expect(response.status(), `adding ${word} Works`).toBe(302);
      }),
    );
  }
  await expect
    .poll(async () => {
      const response = await page.request.get(`${server.url}/competitors?perPage=100`);
      return ((await response.text()).match(/data-row-id=/g) ?? []).length;
    })
    .toBe(TOTAL);
}

type Marked = Window & { __marker?: number };
const params = (url: string) => new URL(url).searchParams;

/** A table refresh as the controller sends it: fetch() of the list address. */
const isRefresh = (request: Request) =>
  request.resourceType() === 'fetch' && new URL(request.url()).pathname === '/competitors';

async function openTable(page: Page, baseUrl: string, query = ''): Promise<void> {
  const response = await page.goto(`${baseUrl}/competitors${query}`);
  expect(response?.status()).toBe(200);
  await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
}

const rows = (page: Page) => page.locator('[data-table-region] tr[data-row-id]');
const cellTexts = (page: Page, label: string) =>
  page.locator(`[data-table-region] tr[data-row-id] td[data-label="${label}"]`).allTextContents();
const rowIds = (page: Page) =>
  rows(page).evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-row-id') ?? ''));
const header = (page: Page, column: string): Locator =>
  page.locator('th').filter({ has: page.locator(`[data-sort-button="${column}"]`) });
const currentPage = (page: Page) => page.locator('.pagination [aria-current="page"]');
const regionState = async (page: Page) =>
  JSON.parse((await page.locator('[data-table-region]').getAttribute('data-state')) ?? 'null') as {
    search: string;
    sort: string;
    page: number;
    perPage: number;
  };

/** The URL carries all four parameters with these values. */
async function expectUrlState(
  page: Page,
  state: { search: string; sort: string; page: number; perPage: number },
): Promise<void> {
  await expect
    .poll(() => {
      const p = params(page.url());
      return {
        keys: [...p.keys()].sort(),
        search: p.get('search'),
        sort: p.get('sort'),
        page: p.get('page'),
        perPage: p.get('perPage'),
      };
    })
    .toEqual({
      keys: ['page', 'perPage', 'search', 'sort'],
      search: state.search,
      sort: state.sort,
      page: String(state.page),
      perPage: String(state.perPage),
    });
}

/** The table state an address stands for (missing parameters take their initial values). */
const addressState = (url: string) => {
  const p = new URL(url).searchParams;
  return {
    path: new URL(url).pathname,
    search: p.get('search') ?? '',
    sort: p.get('sort') ?? '',
    page: p.get('page') ?? '1',
    perPage: p.get('perPage') ?? '15',
  };
};

/** Document (full page) requests the page makes from now on. */
function watchDocumentLoads(page: Page): Request[] {
  const loads: Request[] = [];
  page.on('request', (request) => {
    if (request.resourceType() === 'document') loads.push(request);
  });
  return loads;
}

test.describe('data table on /competitors', () => {
  test('sort toggle: name → asc, again → desc, again → asc, another column → asc; XHR refreshes; URL has all four parameters', async ({
    page,
    seeded,
  }) => {
    await signIn(page, seeded.url);
    await openTable(page, seeded.url);
    const loads = watchDocumentLoads(page);
    const refreshes: Request[] = [];
    page.on('request', (request) => {
      if (isRefresh(request)) refreshes.push(request);
    });
    await expect(header(page, 'name')).toHaveAttribute('aria-sort', 'none');
    // Without a sort the rows are in the default order, by rank ascending, and its header says so.
    await expect(header(page, 'rank')).toHaveAttribute('aria-sort', 'ascending');
    const initialNames = await cellTexts(page, 'Name');
    expect(initialNames).toHaveLength(15);

    const steps = [
      { column: 'name', sort: 'name:asc', aria: 'ascending', spoken: 'Sorted by name, ascending' },
      { column: 'name', sort: 'name:desc', aria: 'descending', spoken: 'Sorted by name, descending' },
      { column: 'name', sort: 'name:asc', aria: 'ascending', spoken: 'Sorted by name, ascending' },
      { column: 'segment', sort: 'segment:asc', aria: 'ascending', spoken: 'Sorted by segment, ascending' },
    ];
    let previous = initialNames;
    for (const step of steps) {
      const answer = page.waitForResponse(
        (r) => isRefresh(r.request()) && params(r.url()).get('sort') === step.sort,
      );
      await page.locator(`[data-sort-button="${step.column}"]`).click();
      const response = await answer;
      expect(response.status()).toBe(200);
      expect(response.request().headers()['x-requested-with']).toBe('XMLHttpRequest');
      // The server saw the header: it answered with the small page (the region, no site chrome).
      const body = await response.text();
      expect(body).toContain('data-table-region');
      expect(body).not.toContain('site-header');

      await expect(header(page, step.column)).toHaveAttribute('aria-sort', step.aria);
      for (const other of ['rank', 'name', 'segment', 'threat', 'updated'].filter((c) => c !== step.column))
        await expect(header(page, other)).toHaveAttribute('aria-sort', 'none');
      await expectUrlState(page, { search: '', sort: step.sort, page: 1, perPage: 15 });
      await expect(page.locator('[data-table-status]')).toHaveText(`${step.spoken} — ${TOTAL} competitors`);
      // Keyboard focus stays on the header the user activated.
      await expect(page.locator(`[data-sort-button="${step.column}"]`)).toBeFocused();

      const names = await cellTexts(page, 'Name');
      expect(names).toHaveLength(15);
      expect(names, `order changed after ${step.sort}`).not.toEqual(previous);
      if (step.sort === 'name:asc') expect(names).toEqual(namesAscending.slice(0, 15));
      if (step.sort === 'name:desc') expect(names).toEqual([...namesAscending].reverse().slice(0, 15));
      if (step.sort === 'segment:asc') {
        const segments = await cellTexts(page, 'Segment');
        expect(segments).toEqual([...segments].sort());
        expect(segments[0]).toBe('Emerging');
      }
      previous = names;
    }
    expect(refreshes).toHaveLength(steps.length);
    for (const request of refreshes) expect(request.headers()['x-requested-with']).toBe('XMLHttpRequest');
    expect(loads, 'no full page load').toEqual([]);
  });

  test("the default order's header reads as sorted; choosing it sorts ascending, then toggles", async ({
    page,
    seeded,
  }) => {
    await signIn(page, seeded.url);
    await openTable(page, seeded.url);
    await expect(header(page, 'rank')).toHaveAttribute('aria-sort', 'ascending');
    const ascending = await rowIds(page);
    // The seed: the first choice of a column sorts it ascending (the same rows, now asked for by name);
    // choosing it again while ascending switches to descending.
    await page.locator('[data-sort-button="rank"]').click();
    await expectUrlState(page, { search: '', sort: 'rank:asc', page: 1, perPage: 15 });
    await expect(header(page, 'rank')).toHaveAttribute('aria-sort', 'ascending');
    await expect.poll(() => rowIds(page)).toEqual(ascending);
    await page.locator('[data-sort-button="rank"]').click();
    await expectUrlState(page, { search: '', sort: 'rank:desc', page: 1, perPage: 15 });
    await expect(header(page, 'rank')).toHaveAttribute('aria-sort', 'descending');
    await expect.poll(() => rowIds(page)).not.toEqual(ascending);
  });

  test('a pagination link refreshes the table without a page navigation', async ({ page, seeded }) => {
    await signIn(page, seeded.url);
    await openTable(page, seeded.url);
    await page.evaluate(() => ((window as Marked).__marker = 1));
    const loads = watchDocumentLoads(page);
    let loadEvents = 0;
    page.on('load', () => loadEvents++);
    // Note: Playwright reports pushState as 'framenavigated' too (a same-document navigation), so a
    // new document is detected by its request, the load events, and the marker on `window`.
    let domReady = 0;
    page.on('domcontentloaded', () => domReady++);

    await expect(currentPage(page)).toHaveText('1');
    const refresh = page.waitForRequest(isRefresh);
    await page.getByRole('link', { name: 'Page 2', exact: true }).click();
    expect((await refresh).headers()['x-requested-with']).toBe('XMLHttpRequest');
    await expect(currentPage(page)).toHaveText('2');
    await expectUrlState(page, { search: '', sort: '', page: 2, perPage: 15 });
    expect(await cellTexts(page, 'Rank')).toEqual(Array.from({ length: 15 }, (_, i) => String(16 + i)));
    await expect(page.locator('[data-table-status]')).toHaveText(`Default order — ${TOTAL} competitors`);

    await page.getByRole('link', { name: 'Next', exact: true }).click();
    await expect(currentPage(page)).toHaveText('3');
    expect(await cellTexts(page, 'Rank')).toEqual(Array.from({ length: 15 }, (_, i) => String(31 + i)));
    await page.getByRole('link', { name: 'Page 4', exact: true }).click();
    await expect(currentPage(page)).toHaveText('4');
    await expect(rows(page)).toHaveCount(TOTAL - 45);
    await page.getByRole('link', { name: 'Previous', exact: true }).click();
    await expect(currentPage(page)).toHaveText('3');
    await expectUrlState(page, { search: '', sort: '', page: 3, perPage: 15 });

    expect(await page.evaluate(() => (window as Marked).__marker)).toBe(1);
    expect(loads, 'no document request').toEqual([]);
    expect(loadEvents).toBe(0);
    expect(domReady).toBe(0);
  });

  test('a sort change from a deep page starts at page 1 of the new order', async ({ page, seeded }) => {
    await signIn(page, seeded.url);
    await openTable(page, seeded.url);
    await page.getByRole('link', { name: 'Page 3', exact: true }).click();
    await expect(currentPage(page)).toHaveText('3');
    await page.locator('[data-sort-button="name"]').click();
    await expectUrlState(page, { search: '', sort: 'name:asc', page: 1, perPage: 15 });
    await expect(currentPage(page)).toHaveText('1');
    expect(await cellTexts(page, 'Name')).toEqual(namesAscending.slice(0, 15));
    // Toggling on a deep page of that order starts over too.
    await page.getByRole('link', { name: 'Page 2', exact: true }).click();
    await expect(currentPage(page)).toHaveText('2');
    await page.locator('[data-sort-button="name"]').click();
    await expectUrlState(page, { search: '', sort: 'name:desc', page: 1, perPage: 15 });
    expect(await cellTexts(page, 'Name')).toEqual([...namesAscending].reverse().slice(0, 15));
  });

  test('keyboard paging keeps focus in the pagination: on the new current page, so Tab goes on from there', async ({
    page,
    seeded,
  }) => {
    await signIn(page, seeded.url);
    await openTable(page, seeded.url);
    const pressOn = async (name: string) => {
      const link = page.getByRole('link', { name, exact: true });
      await link.focus();
      await page.keyboard.press('Enter');
    };
    await pressOn('Page 2');
    await expect(currentPage(page)).toHaveText('2');
    // The link is gone (page 2 is the current page now): focus is on its number, not back at the page top.
    await expect(currentPage(page)).toBeFocused();
    await page.keyboard.press('Tab');
    await expect(page.getByRole('link', { name: 'Page 3', exact: true })).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(currentPage(page)).toHaveText('3');
    await expect(currentPage(page)).toBeFocused();
    // "Next" onto the last page: it is no link there.
    await pressOn('Next');
    await expect(currentPage(page)).toHaveText('4');
    await expect(currentPage(page)).toBeFocused();
    // "Previous" is still a link on the new page: focus stays on it.
    await pressOn('Previous');
    await expect(currentPage(page)).toHaveText('3');
    await expect(page.getByRole('link', { name: 'Previous', exact: true })).toBeFocused();
  });

  test('back and forward restore the table of that address', async ({ page, seeded }) => {
    await signIn(page, seeded.url);
    await openTable(page, seeded.url);
    await page.evaluate(() => ((window as Marked).__marker = 1));
    const search = page.getByRole('searchbox');

    const snapshot = async () => ({
      url: page.url(),
      ids: await rowIds(page),
      nameSort: await header(page, 'name').getAttribute('aria-sort'),
      current: await currentPage(page).textContent(),
      search: await search.inputValue(),
    });
    const initial = await snapshot();

    await search.fill('works');
    await search.press('Enter');
    await expectUrlState(page, { search: 'works', sort: '', page: 1, perPage: 15 });
    await expect(rows(page)).toHaveCount(15);
    const searched = await snapshot();

    await page.locator('[data-sort-button="name"]').click();
    await expectUrlState(page, { search: 'works', sort: 'name:asc', page: 1, perPage: 15 });
    await expect(header(page, 'name')).toHaveAttribute('aria-sort', 'ascending');
    const sorted = await snapshot();
    expect(sorted.ids).not.toEqual(searched.ids);

    await page.getByRole('link', { name: 'Page 2', exact: true }).click();
    await expectUrlState(page, { search: 'works', sort: 'name:asc', page: 2, perPage: 15 });
    await expect(currentPage(page)).toHaveText('2');
    const paged = await snapshot();
    expect(paged.ids).not.toEqual(sorted.ids);

    const expectShowing = async (state: typeof initial) => {
      await expect.poll(() => addressState(page.url())).toEqual(addressState(state.url));
      await expect.poll(() => rowIds(page)).toEqual(state.ids);
      await expect(header(page, 'name')).toHaveAttribute('aria-sort', state.nameSort ?? '');
      await expect(currentPage(page)).toHaveText(state.current ?? '');
      await expect(search).toHaveValue(state.search);
    };

    await page.goBack();
    await expectShowing(sorted);
    await page.goBack();
    await expectShowing(searched);
    await page.goBack();
    await expectShowing(initial);
    await page.goForward();
    await expectShowing(searched);
    await page.goForward();
    await expectShowing(sorted);
    await page.goForward();
    await expectShowing(paged);
    // All of that happened inside one document.
    expect(await page.evaluate(() => (window as Marked).__marker)).toBe(1);

    // Leaving for another page and coming back shows the full page (not the small XHR answer) at that state.
    await page.getByRole('link', { name: 'Open Jade Works', exact: true }).click();
    await expect(page).toHaveURL(/\/competitors\/[0-9a-f-]{36}$/);
    await page.goBack();
    await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
    await expect(page.locator('.site-header')).toBeVisible();
    await expectShowing(paged);
  });

  test('a failed refresh logs "Error updating table:" and leaves the table as it was', async ({
    page,
    seeded,
  }) => {
    await signIn(page, seeded.url);
    await openTable(page, seeded.url);
    const errors: string[] = [];
    page.on('console', (message) => {
      // The browser's own network notices ("Failed to load resource: …") are not the app's doing.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        errors.push(message.text());
    });
    const region = page.locator('[data-table-region]');
    const before = { url: page.url(), ids: await rowIds(page), html: await region.innerHTML() };
    const unchanged = async () => {
      expect(page.url()).toBe(before.url);
      expect(await rowIds(page)).toEqual(before.ids);
      expect(await region.innerHTML()).toBe(before.html);
      await expect(header(page, 'name')).toHaveAttribute('aria-sort', 'none');
      await expect(page.locator('[data-table-loading]')).toBeHidden();
      await expect(page.locator('[data-table-status]')).toHaveText('');
      await expect(page.getByRole('alert')).toHaveCount(0);
    };

    // (1) the network fails
    const failNetwork = (route: Route) =>
      route.request().headers()['x-requested-with'] === 'XMLHttpRequest' ? route.abort() : route.continue();
    await page.route('**/competitors?**', failNetwork);
    await page.locator('[data-sort-button="name"]').click();
    await expect.poll(() => errors.filter((e) => e.startsWith('Error updating table:'))).toHaveLength(1);
    await unchanged();
    await page.unroute('**/competitors?**', failNetwork);

    // (2) the server answers with an error page
    const failServer = (route: Route) =>
      route.request().headers()['x-requested-with'] === 'XMLHttpRequest'
        ? route.fulfill({
            status: 500,
            contentType: 'text/html',
            body: '<!doctype html><html><body><div data-table-region>broken</div></body></html>',
          })
        : route.continue();
    await page.route('**/competitors?**', failServer);
    await page.getByRole('link', { name: 'Page 2', exact: true }).click();
    await expect.poll(() => errors.filter((e) => e.startsWith('Error updating table:'))).toHaveLength(2);
    await unchanged();
    await page.unroute('**/competitors?**', failServer);
    expect(errors.filter((e) => !e.startsWith('Error updating table:'))).toEqual([]);

    // The table still behaves from what it shows: the name column is unsorted, so choosing it sorts ascending.
    await page.locator('[data-sort-button="name"]').click();
    await expect(header(page, 'name')).toHaveAttribute('aria-sort', 'ascending');
    await expectUrlState(page, { search: '', sort: 'name:asc', page: 1, perPage: 15 });
    expect(await cellTexts(page, 'Name')).toEqual(namesAscending.slice(0, 15));
  });

  test('focus, caret and typed text stay in the search box while refreshes land during fast typing', async ({
    page,
    seeded,
  }) => {
    await signIn(page, seeded.url);
    await openTable(page, seeded.url);
    // Every refresh takes 200 ms, so a response lands while the user is still typing.
    await page.route(
      (url) => url.pathname === '/competitors' && url.searchParams.has('search'),
      async (route) => {
        if (route.request().headers()['x-requested-with'] !== 'XMLHttpRequest') return route.continue();
        await new Promise((resolve) => setTimeout(resolve, 200));
        await route.continue().catch(() => undefined); // aborted by a newer request meanwhile
      },
    );
    // Record what the search box held each time a refresh was applied.
    await page.evaluate(() => {
      const w = window as Window & { __applied?: { search: string; value: string; focused: boolean }[] };
      w.__applied = [];
      const input = document.querySelector<HTMLInputElement>('input[type="search"]');
      document.querySelector('[data-table]')?.addEventListener('datatable:updated', (event) => {
        w.__applied?.push({
          search: (event as CustomEvent<{ search: string }>).detail.search,
          value: input?.value ?? '',
          focused: document.activeElement === input,
        });
      });
    });

    const search = page.getByRole('searchbox');
    await search.click();
    const first = page.waitForRequest((r) => isRefresh(r) && params(r.url()).get('search') === 'hel');
    await search.pressSequentially('hel', { delay: 30 });
    await first;
    await search.pressSequentially('ix comp', { delay: 40 });
    const typed = 'helix comp';

    await expectUrlState(page, { search: typed, sort: '', page: 1, perPage: 15 });
    await expect(rows(page)).toHaveCount(1);
    expect(await cellTexts(page, 'Name')).toEqual(['Helix Compete']);
    await expect(search).toBeFocused();
    await expect(search).toHaveValue(typed);
    expect(await search.evaluate((el: HTMLInputElement) => [el.selectionStart, el.selectionEnd])).toEqual([
      typed.length,
      typed.length,
    ]);

    const applied = await page.evaluate(
      () =>
        (window as Window & { __applied?: { search: string; value: string; focused: boolean }[] })
          .__applied ?? [],
    );
    expect(applied.map((a) => a.search)).toContain('hel');
    expect(applied.at(-1)?.search).toBe(typed);
    for (const a of applied) {
      expect(a.focused).toBe(true);
      expect(typed.startsWith(a.value)).toBe(true);
      expect(a.value.length).toBeGreaterThanOrEqual(a.search.length);
    }
  });

  test('a late response never overwrites a newer one', async ({ page, seeded }) => {
    await signIn(page, seeded.url);
    await openTable(page, seeded.url);
    const failed: string[] = [];
    page.on('requestfailed', (request) => {
      if (isRefresh(request)) failed.push(params(request.url()).get('search') ?? '');
    });

    // The first search's answer is held back (up to 1.5 s); the second one is answered at once.
    let heldDone: Promise<void> = Promise.resolve();
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    await page.route(
      (url) => url.pathname === '/competitors' && url.searchParams.get('search') === 'aurora',
      (route) => {
        heldDone = (async () => {
          await Promise.race([released, new Promise((resolve) => setTimeout(resolve, 1_500))]);
          await route.continue().catch(() => undefined);
        })();
      },
    );

    const search = page.getByRole('searchbox');
    const slow = page.waitForRequest((r) => isRefresh(r) && params(r.url()).get('search') === 'aurora');
    await search.fill('aurora');
    await slow;
    const fast = page.waitForResponse(
      (r) => isRefresh(r.request()) && params(r.url()).get('search') === 'zephyr',
    );
    await search.fill('zephyr');
    await fast;
    await expect.poll(() => cellTexts(page, 'Name')).toEqual(['Zephyr Works']);
    await expectUrlState(page, { search: 'zephyr', sort: '', page: 1, perPage: 15 });

    // Now let the older answer go, and wait until it has been dealt with.
    release();
    await heldDone;
    await expect.poll(() => failed).toContain('aurora'); // the older request was aborted
    expect(await cellTexts(page, 'Name')).toEqual(['Zephyr Works']);
    await expectUrlState(page, { search: 'zephyr', sort: '', page: 1, perPage: 15 });
    await expect(page.locator('[data-table-status]')).toHaveText(
      'Default order — 1 competitor matching “zephyr”',
    );
    expect((await regionState(page)).search).toBe('zephyr');
    await expect(search).toHaveValue('zephyr');
  });

  test('without JavaScript the search form, sort buttons, pagination links and page size work by full navigation', async ({
    browser,
    seeded,
  }) => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      await signIn(page, seeded.url);
      await expect(page.locator('html')).not.toHaveAttribute('data-ready', 'true');
      const loads = watchDocumentLoads(page);
      const works = seededNames.slice().sort(byName);

      // Search form
      await page.getByRole('searchbox').fill('works');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await expectUrlState(page, { search: 'works', sort: '', page: 1, perPage: 15 });
      await expect(rows(page)).toHaveCount(15);
      await expect(page.locator('.data-table__count')).toHaveText('40 competitors · page 1 of 3');

      // A sort header button
      await page.locator('[data-sort-button="name"]').click();
      await expectUrlState(page, { search: 'works', sort: 'name:asc', page: 1, perPage: 15 });
      await expect(header(page, 'name')).toHaveAttribute('aria-sort', 'ascending');
      expect(await cellTexts(page, 'Name')).toEqual(works.slice(0, 15));
      await page.locator('[data-sort-button="name"]').click();
      await expectUrlState(page, { search: 'works', sort: 'name:desc', page: 1, perPage: 15 });
      expect(await cellTexts(page, 'Name')).toEqual(works.slice().reverse().slice(0, 15));
      await page.locator('[data-sort-button="name"]').click();
      await expectUrlState(page, { search: 'works', sort: 'name:asc', page: 1, perPage: 15 });

      // A pagination link
      await page.getByRole('link', { name: 'Page 2', exact: true }).click();
      await expectUrlState(page, { search: 'works', sort: 'name:asc', page: 2, perPage: 15 });
      await expect(currentPage(page)).toHaveText('2');
      expect(await cellTexts(page, 'Name')).toEqual(works.slice(15, 30));

      // The page-size selector and the form's submit button
      await page.getByLabel('Rows per page').selectOption('25');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await expectUrlState(page, { search: 'works', sort: 'name:asc', page: 1, perPage: 25 });
      expect(await cellTexts(page, 'Name')).toEqual(works.slice(0, 25));
      await expect(page.getByLabel('Rows per page')).toHaveValue('25');

      // A sort change from a deep page starts at page 1 of the new order.
      await page.getByRole('link', { name: 'Page 2', exact: true }).click();
      await page.locator('[data-sort-button="name"]').click();
      await expectUrlState(page, { search: 'works', sort: 'name:desc', page: 1, perPage: 25 });
      expect(await cellTexts(page, 'Name')).toEqual(works.slice().reverse().slice(0, 25));

      // The empty state's "Clear search" link
      await page.getByRole('searchbox').fill('nothing matches this');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await expect(rows(page)).toHaveCount(0);
      await page.getByRole('link', { name: 'Clear search' }).click();
      await expectUrlState(page, { search: '', sort: 'name:desc', page: 1, perPage: 25 });
      await expect(rows(page)).toHaveCount(25);

      // Every step above was a full page load.
      expect(loads.length).toBe(10);
    } finally {
      await context.close();
    }
  });

  test('invalid parameters give a valid page', async ({ page, seeded }) => {
    await signIn(page, seeded.url);
    const lastPage = Math.ceil(TOTAL / 15);

    await openTable(page, seeded.url, '?sort=password:asc&page=-4&perPage=7');
    expect(await regionState(page)).toEqual({ search: '', sort: '', page: 1, perPage: 15 });
    await expect(rows(page)).toHaveCount(15);
    // The default order (by rank, ascending) is what the headers show; changed on purpose: every column
    // read `none` while the rows were in rank order.
    await expect(header(page, 'rank')).toHaveAttribute('aria-sort', 'ascending');
    for (const column of ['name', 'segment', 'threat', 'updated'])
      await expect(header(page, column)).toHaveAttribute('aria-sort', 'none');
    await expect(currentPage(page)).toHaveText('1');

    await openTable(page, seeded.url, '?page=999999');
    expect(await regionState(page)).toEqual({ search: '', sort: '', page: lastPage, perPage: 15 });
    await expect(currentPage(page)).toHaveText(String(lastPage));
    await expect(rows(page)).toHaveCount(TOTAL - (lastPage - 1) * 15);
    // The table carries on from the page it shows.
    await page.getByRole('link', { name: 'Previous', exact: true }).click();
    await expectUrlState(page, { search: '', sort: '', page: lastPage - 1, perPage: 15 });
    await expect(rows(page)).toHaveCount(15);

    await openTable(page, seeded.url, '?search=works&sort=name:sideways&page=abc&perPage=1000');
    expect(await regionState(page)).toEqual({ search: 'works', sort: '', page: 1, perPage: 15 });
    await expect(page.getByRole('searchbox')).toHaveValue('works');
  });

  test('the page-size selector refreshes with 10, 25, 50 or 100 rows from page 1', async ({
    page,
    seeded,
  }) => {
    await signIn(page, seeded.url);
    await openTable(page, seeded.url);
    await page.getByRole('link', { name: 'Page 2', exact: true }).click();
    await expect(currentPage(page)).toHaveText('2');

    const perPage = page.getByLabel('Rows per page');
    await expect(perPage).toHaveValue('15');
    await perPage.selectOption('25');
    await expectUrlState(page, { search: '', sort: '', page: 1, perPage: 25 });
    await expect(rows(page)).toHaveCount(25);
    await expect(page.locator('.data-table__count')).toHaveText(`${TOTAL} competitors · page 1 of 2`);

    await perPage.selectOption('10');
    await expectUrlState(page, { search: '', sort: '', page: 1, perPage: 10 });
    await expect(rows(page)).toHaveCount(10);
    await expect(page.locator('.data-table__count')).toHaveText(`${TOTAL} competitors · page 1 of 5`);

    await perPage.selectOption('100');
    await expectUrlState(page, { search: '', sort: '', page: 1, perPage: 100 });
    await expect(rows(page)).toHaveCount(TOTAL);
    await expect(page.locator('.pagination')).toHaveCount(0);

    // Back restores the page size in the selector too.
    await page.goBack();
    await expectUrlState(page, { search: '', sort: '', page: 1, perPage: 10 });
    await expect(rows(page)).toHaveCount(10);
    await expect(perPage).toHaveValue('10');
  });

  test('changing the page size right after typing keeps the typed search', async ({ page, seeded }) => {
    await signIn(page, seeded.url);
    await openTable(page, seeded.url);
    // The search is still waiting out its debounce when the page size changes.
    await page.getByRole('searchbox').fill('works');
    await page.getByLabel('Rows per page').selectOption('25');
    await expectUrlState(page, { search: 'works', sort: '', page: 1, perPage: 25 });
    await expect(rows(page)).toHaveCount(25);
    await expect(page.locator('.data-table__count')).toHaveText('40 competitors · page 1 of 2');
    await expect(page.getByRole('searchbox')).toHaveValue('works');
  });

  test('an empty result offers "Clear search", which restores the rows', async ({ page, seeded }) => {
    await signIn(page, seeded.url);
    await openTable(page, seeded.url);
    const search = page.getByRole('searchbox');
    await search.fill('no such competitor');
    await expect(rows(page)).toHaveCount(0);
    await expect(page.locator('.data-table__empty')).toContainText(
      'No competitors match “no such competitor”.',
    );
    await expect(page.locator('[data-table-status]')).toHaveText(
      'Default order — 0 competitors matching “no such competitor”',
    );
    await expectUrlState(page, { search: 'no such competitor', sort: '', page: 1, perPage: 15 });

    await page.getByRole('link', { name: 'Clear search' }).click();
    await expect(rows(page)).toHaveCount(15);
    await expect(search).toHaveValue('');
    await expectUrlState(page, { search: '', sort: '', page: 1, perPage: 15 });
    await expect(page.locator('[data-table-status]')).toHaveText(`Default order — ${TOTAL} competitors`);
  });

  test('clearing the search by keyboard (the box’s × or the empty result’s link) leaves focus in the search box', async ({
    page,
    seeded,
  }) => {
    await signIn(page, seeded.url);
    await openTable(page, seeded.url);
    const search = page.getByRole('searchbox');
    const focusIsInSearch = () => search.evaluate((input) => document.activeElement === input);

    // The toolbar's ×: it goes away with the text it clears, so focus must not go with it.
    await search.fill('Aurora');
    await expect(rows(page)).toHaveCount(1);
    await page.getByRole('button', { name: 'Clear search' }).focus();
    await page.keyboard.press('Enter');
    await expect(rows(page)).toHaveCount(15);
    await expect(search).toHaveValue('');
    expect(await focusIsInSearch()).toBe(true);

    // The empty result's link: it is in the swapped region, gone once the rows are back.
    await search.fill('no such competitor');
    await expect(rows(page)).toHaveCount(0);
    await page.getByRole('link', { name: 'Clear search' }).focus();
    await page.keyboard.press('Enter');
    await expect(rows(page)).toHaveCount(15);
    await expect(search).toHaveValue('');
    expect(await focusIsInSearch()).toBe(true);
    // Typing goes on in the box, as a user who just cleared it expects.
    await page.keyboard.type('Basalt');
    await expect(search).toHaveValue('Basalt');
    await expect(rows(page)).toHaveCount(1);
  });

  test('a table refresh answered 304 from the cache never brings back a used request key', async ({
    page,
    seeded,
  }) => {
    await signIn(page, seeded.url);
    await openTable(page, seeded.url);
    const revalidated: number[] = [];
    page.on('response', async (response) => {
      const headers = await response.request().allHeaders();
      if (response.url().includes('page=2') && headers['if-none-match']) revalidated.push(response.status());
    });
    const keys = () =>
      page
        .locator('[data-table-region] input[name="_idempotency_key"]')
        .evaluateAll((inputs) => inputs.map((input) => (input as HTMLInputElement).value));
    const seen: string[] = [...(await keys())];
    for (const target of ['2', '1', '2', '1', '2']) {
      await page.getByRole('link', { name: `Page ${target}`, exact: true }).click();
      await expect(currentPage(page)).toHaveText(target);
      const now = await keys();
      expect(now).toHaveLength(15);
      seen.push(...now);
    }
    // The later visits to page 2 were answered from the browser's cache (the server said 304)...
    expect(revalidated.length).toBeGreaterThan(0);
    // ...and still, every delete form on screen carried a key no other form ever had.
    expect(new Set(seen).size).toBe(seen.length);
  });

  test('the loading indicator stays hidden for fast answers and shows after 150 ms for slow ones', async ({
    page,
    seeded,
  }) => {
    // The page's clock is the test's: how long this machine takes to answer cannot decide what the
    // indicator does, only the answer's timing as the test sets it.
    await page.clock.install();
    await signIn(page, seeded.url);
    await openTable(page, seeded.url);
    const loading = page.locator('[data-table-loading]');
    await expect(loading).toBeHidden();
    await page.evaluate(() => {
      const w = window as Window & { __loadingShown?: number };
      w.__loadingShown = 0;
      const el = document.querySelector<HTMLElement>('[data-table-loading]');
      if (el)
        new MutationObserver(() => {
          if (!el.hidden) w.__loadingShown = (w.__loadingShown ?? 0) + 1;
        }).observe(el, { attributes: true, attributeFilter: ['hidden'] });
    });
    const timesShown = () =>
      page.evaluate(() => (window as Window & { __loadingShown?: number }).__loadingShown ?? 0);
    await page.clock.pauseAt(Date.now() + 60_000);

    // Fast: answered before 150 ms have passed on the page's clock; the pending indicator is cancelled,
    // so letting a whole second pass afterwards still shows nothing.
    const page2 = await page.request.get(`${seeded.url}/competitors?search=&sort=&page=2&perPage=15`, {
      headers: { 'X-Requested-With': 'XMLHttpRequest' },
    });
    const fastBody = await page2.text();
    await page.route('**/competitors?**page=2**', (route) =>
      route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: fastBody }),
    );
    await page.getByRole('link', { name: 'Page 2', exact: true }).click();
    await expect(currentPage(page)).toHaveText('2');
    await page.clock.runFor(1_000);
    await expect(loading).toBeHidden();
    expect(await timesShown()).toBe(0);

    // Slow: held; hidden until 150 ms have passed, shown from then on, hidden again with the answer.
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/competitors?**page=3**', async (route) => {
      await released;
      await route.continue();
    });
    await page.getByRole('link', { name: 'Page 3', exact: true }).click();
    await page.clock.runFor(149);
    await expect(loading).toBeHidden();
    expect(await timesShown()).toBe(0);
    await page.clock.runFor(1);
    await expect(loading).toBeVisible();
    await expect(page.locator('[data-table-region]')).toHaveAttribute('aria-busy', 'true');
    expect(await timesShown()).toBe(1);
    await expect(currentPage(page)).toHaveText('2');
    release();
    await expect(currentPage(page)).toHaveText('3');
    await expect(loading).toBeHidden();
    await expect(page.locator('[data-table-region]')).toHaveAttribute('aria-busy', 'false');
  });
});
