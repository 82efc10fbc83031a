import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Threat } from '#events/competitor/fields.ts';
import { EXACT_COUNT_LIMIT, listCompetitors } from '#projections/competitor-list/competitor-list.queries.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { addCompetitorCommand, envelope } from '#tests/support/runtime-pieces.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';
import type { TestClient } from '#tests/support/test-client.ts';

/**
 * The /competitors data table on the server (issue 5): the XHR answer is a small HTML page holding
 * the region, invalid parameters are normalized instead of failing, search is a case-insensitive
 * literal substring over name, website, segment and notes, every sortable column orders correctly
 * both ways (with stable paging), and counts are exact below 10,000.
 *
 * Expected orders and matches are computed here from the raw read-model columns, independently of
 * the query code under test.
 */

interface ModelRow {
  id: string;
  name: string;
  website: string | null;
  segmentName: string;
  threat: Threat;
  rank: number;
  notes: string[];
  updatedAt: number;
}

interface RenderedState {
  search: string;
  sort: string;
  page: number;
  perPage: number;
}

const severity: Record<Threat, number> = { low: 1, medium: 2, high: 3 };
const segmentIds = ['enterprise', 'mid-market', 'smb', 'emerging'] as const;
const threats: Threat[] = ['low', 'medium', 'high'];

/** Rows with the characters the search must treat literally, mixed case, and a note-only match. */
const specials = [
  { name: 'Percent 100% Co', segmentId: 'smb', threat: 'high' as Threat, website: null },
  { name: 'Under_score Labs', segmentId: 'emerging', threat: 'low' as Threat, website: null },
  { name: 'Backslash \\ Partners', segmentId: 'enterprise', threat: 'medium' as Threat, website: null },
  {
    name: 'MIXED Case Corp',
    segmentId: 'mid-market',
    threat: 'medium' as Threat,
    website: 'https://MixedCaseSite.Example.org',
  },
  { name: 'Quiet Holdings', segmentId: 'smb', threat: 'low' as Threat, website: null },
  { name: 'percentile group', segmentId: 'enterprise', threat: 'high' as Threat, website: null },
];
const fillerWords = [
  'Anvil',
  'Bramble',
  'Citadel',
  'Driftwood',
  'Emberly',
  'Foxglove',
  'Gossamer',
  'Hearth',
  'Ironwood',
  'Jubilee',
  'Kingfisher',
  'Lantern',
  'Mosaic',
  'Nettle',
  'Oakmoss',
  'Paragon',
  'Quill',
  'Rosewood',
  'Saffron',
  'Thistle',
  'Upland',
  'Verdant',
  'Wayfarer',
  'Yarrow',
  'Zenith',
  'Alcove',
  'Bellwether',
  'Cormorant',
];
const TOTAL = 6 + specials.length + fillerWords.length; // 40
const sortable = ['rank', 'name', 'segment', 'threat', 'updated'] as const;

const decode = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** What a rendered /competitors answer shows. */
function readTable(html: string) {
  const region = /<div[^>]*\bdata-table-region[^>]*>/.exec(html)?.[0];
  if (!region) throw new Error(`no [data-table-region] in:\n${html.slice(0, 500)}`);
  const attr = (name: string) => {
    const value = new RegExp(`\\b${name}="([^"]*)"`).exec(region)?.[1];
    return value === undefined ? undefined : decode(value);
  };
  return {
    state: JSON.parse(attr('data-state') ?? 'null') as RenderedState,
    summary: attr('data-summary') ?? '',
    ids: [...html.matchAll(/<tr[^>]*\bdata-row-id="([^"]+)"/g)].map((m) => m[1] ?? ''),
  };
}

const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);

/** The order the SQL promises: the column, then id in the same direction (byte order, as in the C collation). */
function expectedOrder(rows: ModelRow[], column: (typeof sortable)[number], direction: 'asc' | 'desc') {
  const key = (r: ModelRow): string | number => {
    switch (column) {
      case 'rank':
        return r.rank;
      case 'name':
        return r.name.toLowerCase();
      case 'segment':
        return r.segmentName;
      case 'threat':
        return severity[r.threat];
      case 'updated':
        return r.updatedAt;
    }
  };
  const sign = direction === 'asc' ? 1 : -1;
  return [...rows].sort((a, b) => sign * (cmp(key(a), key(b)) || cmp(a.id, b.id))).map((r) => r.id);
}

/** The search the issue describes: case-insensitive literal substring over name, website, segment, notes. */
const matches = (rows: ModelRow[], term: string) =>
  rows.filter((r) =>
    [r.name, r.website ?? '', r.segmentName, ...r.notes].join(' ').toLowerCase().includes(term.toLowerCase()),
  );

describe.each(databaseBackends)('data table on /competitors (%s)', (backend) => {
  let app: TestApp;
  let viewer: TestClient;
  let model: ModelRow[] = [];

  const get = async (query: string, options: { xhr?: boolean } = {}) => {
    const response = await viewer.get(`/competitors${query}`, options);
    const html = await response.text();
    return { response, html };
  };

  async function waitForCount(n: number): Promise<void> {
    const deadline = Date.now() + 20_000;
    let seen = -1;
    while (Date.now() < deadline) {
      const { rows } = await app.db.pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM competitor_list',
      );
      seen = rows[0]?.n ?? 0;
      if (seen === n) return;
      await sleep(25);
    }
    throw new Error(`competitor_list has ${seen} rows, expected ${n}`);
  }

  beforeAll(async () => {
    app = await startTestApp(backend); // with the 6 demo competitors
    const base = Date.UTC(2025, 0, 1);
    const add = async (
      name: string,
      fields: { segmentId: string; threat: Threat; website: string | null },
      i: number,
    ) => {
      const command = addCompetitorCommand(name, fields);
      // Every third pair shares a timestamp, so the id tie-break of "updated" is exercised too.
      const at = new Date(base + Math.floor(i / 2) * 60_000).toISOString();
      const outcome = await app.runtime.route(envelope(command, { at }));
      expect(outcome.status, name).toBe('accepted');
      return command.payload.competitorId;
    };
    let i = 0;
    let quiet = '';
    for (const s of specials) {
      const id = await add(s.name, s, i++);
      if (s.name === 'Quiet Holdings') quiet = id;
    }
    for (const [j, word] of fillerWords.entries()) {
      await add(
        `${word} Systems`,
        {
          segmentId: segmentIds[j % segmentIds.length] ?? 'smb',
          threat: threats[j % threats.length] ?? 'low',
          website: `https://${word.toLowerCase()}.example.net`,
        },
        i++,
      );
    }
    const noted = await app.runtime.route(
      envelope({
        type: 'UpdateCompetitorNote',
        payload: { competitorId: quiet, column: 'general', value: 'Quietly acquiring PlatypusSoft.' },
      }),
    );
    expect(noted.status).toBe('accepted');
    await waitForCount(TOTAL);
    // The note lands after the row: wait for it too.
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const { rows } = await app.db.pool.query<{ general: string }>(
        'SELECT general FROM competitor_list WHERE id = $1',
        [quiet],
      );
      if (rows[0]?.general) break;
      await sleep(25);
    }

    const { rows } = await app.db.pool.query<{
      id: string;
      name: string;
      website: string | null;
      segment_name: string;
      threat: Threat;
      rank: number;
      strengths: string;
      weaknesses: string;
      pricing: string;
      general: string;
      updated_at: Date;
    }>(
      `SELECT id, name, website, segment_name, threat, rank, strengths, weaknesses, pricing, general, updated_at
       FROM competitor_list`,
    );
    model = rows.map((r) => ({
      id: r.id,
      name: r.name,
      website: r.website,
      segmentName: r.segment_name,
      threat: r.threat,
      rank: r.rank,
      notes: [r.strengths, r.weaknesses, r.pricing, r.general],
      updatedAt: r.updated_at.getTime(),
    }));
    expect(model).toHaveLength(TOTAL);
    expect(model.find((r) => r.id === quiet)?.notes).toContain('Quietly acquiring PlatypusSoft.');
    viewer = await app.client('viewer');
  });

  afterAll(async () => {
    await app?.close();
  });

  it('answers a refresh (X-Requested-With) with a small HTML page holding the region and no site chrome', async () => {
    const full = await get('?search=&sort=name:asc&page=2&perPage=10');
    const xhr = await get('?search=&sort=name:asc&page=2&perPage=10', { xhr: true });
    for (const { response } of [full, xhr]) {
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(response.headers.get('vary') ?? '').toMatch(/X-Requested-With/i);
    }

    // The full page: chrome, scripts, and the table.
    expect(full.html).toMatch(/^<!doctype html>/i);
    expect(full.html).toContain('class="site-header"');
    expect(full.html).toContain('<nav aria-label="Main"');
    expect(full.html).toMatch(/<script type="module"/);
    expect(full.html).toContain('data-table-region');

    // The XHR answer: still an HTML page with the region, but none of the chrome.
    expect(xhr.html).toMatch(/^<!doctype html>/i);
    expect(xhr.html).toMatch(/<html[^>]*>/);
    expect(xhr.html).toMatch(/<body>/);
    expect(xhr.html).toContain('data-table-region');
    expect(xhr.html).not.toContain('site-header');
    expect(xhr.html).not.toContain('aria-label="Main"');
    expect(xhr.html).not.toContain('<script');
    expect(xhr.html).not.toContain('Sign out');

    // Same table in both.
    const a = readTable(full.html);
    const b = readTable(xhr.html);
    expect(b).toEqual(a);
    expect(a.state).toEqual({ search: '', sort: 'name:asc', page: 2, perPage: 10 });
    expect(a.ids).toEqual(expectedOrder(model, 'name', 'asc').slice(10, 20));

    // Smaller, by at least the chrome.
    const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
    expect(bytes(xhr.html)).toBeLessThan(bytes(full.html));
    expect(bytes(full.html) - bytes(xhr.html)).toBeGreaterThan(500);
  });

  it('turns every invalid parameter into a valid page (200, normalized state)', async () => {
    const long = 'x'.repeat(500);
    const lastPage = Math.ceil(TOTAL / 15); // 3
    const cases: [string, RenderedState][] = [
      ['', { search: '', sort: '', page: 1, perPage: 15 }],
      ['?sort=password:asc&page=-4&perPage=7', { search: '', sort: '', page: 1, perPage: 15 }],
      ['?sort=password:asc', { search: '', sort: '', page: 1, perPage: 15 }],
      ['?sort=name:sideways', { search: '', sort: '', page: 1, perPage: 15 }],
      ['?sort=name', { search: '', sort: '', page: 1, perPage: 15 }],
      ['?sort=NAME:ASC', { search: '', sort: '', page: 1, perPage: 15 }],
      ['?sort=__proto__:asc', { search: '', sort: '', page: 1, perPage: 15 }],
      [
        `?sort=${encodeURIComponent('name:asc; DROP TABLE competitor_list')}`,
        { search: '', sort: '', page: 1, perPage: 15 },
      ],
      ['?sort=name:desc', { search: '', sort: 'name:desc', page: 1, perPage: 15 }],
      ['?sort=name:asc&sort=threat:desc', { search: '', sort: 'threat:desc', page: 1, perPage: 15 }],
      ['?page=0', { search: '', sort: '', page: 1, perPage: 15 }],
      ['?page=-4', { search: '', sort: '', page: 1, perPage: 15 }],
      ['?page=abc', { search: '', sort: '', page: 1, perPage: 15 }],
      ['?page=1.5', { search: '', sort: '', page: 1, perPage: 15 }],
      ['?page=', { search: '', sort: '', page: 1, perPage: 15 }],
      ['?page=2', { search: '', sort: '', page: 2, perPage: 15 }],
      [`?page=${lastPage}`, { search: '', sort: '', page: lastPage, perPage: 15 }],
      [`?page=${lastPage + 1}`, { search: '', sort: '', page: lastPage, perPage: 15 }],
      ['?page=999999', { search: '', sort: '', page: lastPage, perPage: 15 }],
      ['?page=9007199254740993', { search: '', sort: '', page: lastPage, perPage: 15 }],
      ['?page=99999999999999999999', { search: '', sort: '', page: lastPage, perPage: 15 }],
      ['?perPage=7', { search: '', sort: '', page: 1, perPage: 15 }],
      ['?perPage=0', { search: '', sort: '', page: 1, perPage: 15 }],
      ['?perPage=-10', { search: '', sort: '', page: 1, perPage: 15 }],
      ['?perPage=1000', { search: '', sort: '', page: 1, perPage: 15 }],
      ['?perPage=abc', { search: '', sort: '', page: 1, perPage: 15 }],
      ['?perPage=25', { search: '', sort: '', page: 1, perPage: 25 }],
      ['?perPage=100&page=2', { search: '', sort: '', page: 1, perPage: 100 }],
      ['?perPage=10&page=999', { search: '', sort: '', page: 4, perPage: 10 }],
      ['?search=systems&page=9', { search: 'systems', sort: '', page: 2, perPage: 15 }],
      ['?search=no-such-thing&page=5', { search: 'no-such-thing', sort: '', page: 1, perPage: 15 }],
      ['?search=anvil&search=zenith', { search: 'zenith', sort: '', page: 1, perPage: 15 }],
      [`?search=${long}`, { search: 'x'.repeat(200), sort: '', page: 1, perPage: 15 }],
      ['?search=%20%20quill%20%20', { search: 'quill', sort: '', page: 1, perPage: 15 }],
    ];
    for (const [query, expected] of cases) {
      for (const xhr of [false, true]) {
        const { response, html } = await get(query, { xhr });
        const label = `${query || '(none)'}${xhr ? ' (xhr)' : ''}`;
        expect(response.status, label).toBe(200);
        const table = readTable(html);
        expect(table.state, label).toEqual(expected);
        const found = expected.search ? matches(model, expected.search).length : TOTAL;
        const onPage = Math.max(
          0,
          Math.min(expected.perPage, found - (expected.page - 1) * expected.perPage),
        );
        expect(table.ids, label).toHaveLength(onPage);
      }
    }
  });

  it('searches case-insensitively over name, website, segment and note text', async () => {
    const cases: [string, string[]][] = [
      ['quill', ['Quill Systems']], // name
      ['QUILL', ['Quill Systems']],
      ['d case c', ['MIXED Case Corp']], // middle of a name, across a space
      ['mixedcasesite.example', ['MIXED Case Corp']], // website (stored mixed case)
      ['MIXEDCASESITE', ['MIXED Case Corp']],
      ['anvil.example.net', ['Anvil Systems']],
      ['platypussoft', ['Quiet Holdings']], // note text only
      ['PlatypusSoft', ['Quiet Holdings']],
      ['salesforce', ['Northwind Analytics']], // a demo note
      ['nothing like this anywhere', []],
    ];
    for (const [term, names] of cases) {
      const { html } = await get(`?search=${encodeURIComponent(term)}&perPage=100`);
      const table = readTable(html);
      const expected = matches(model, term);
      expect(expected.map((r) => r.name).sort(), `model for ${term}`).toEqual([...names].sort());
      expect(table.ids.sort(), term).toEqual(expected.map((r) => r.id).sort());
    }
    // Segment names match too: every row of the segment, and only rows that mention it.
    for (const term of ['emerging', 'Mid-Market', 'enterprise', 'SMB']) {
      const { html } = await get(`?search=${encodeURIComponent(term)}&perPage=100`);
      const ids = readTable(html).ids.sort();
      const inSegment = model.filter((r) => r.segmentName.toLowerCase() === term.toLowerCase());
      expect(inSegment.length, term).toBeGreaterThan(1);
      for (const r of inSegment) expect(ids, `${term}: ${r.name}`).toContain(r.id);
      expect(ids, term).toEqual(
        matches(model, term)
          .map((r) => r.id)
          .sort(),
      );
    }
  });

  it('treats % and _ (and backslash) in the search as literal characters', async () => {
    const cases: [string, string[]][] = [
      ['%', ['Percent 100% Co']],
      ['100%', ['Percent 100% Co']],
      ['t%c', []], // as a wildcard this would match nearly everything
      ['_', ['Under_score Labs']],
      ['r_s', ['Under_score Labs']], // as a wildcard, "res" (e.g. "aggressively") would match too
      ['\\', ['Backslash \\ Partners']],
      ['%%', []],
      ['__', []],
    ];
    for (const [term, names] of cases) {
      const { response, html } = await get(`?search=${encodeURIComponent(term)}&perPage=100`);
      expect(response.status, term).toBe(200);
      const ids = readTable(html).ids;
      const byId = new Map(model.map((r) => [r.id, r.name]));
      expect(ids.map((id) => byId.get(id)).sort(), term).toEqual([...names].sort());
      expect(
        matches(model, term)
          .map((r) => r.name)
          .sort(),
        `model for ${term}`,
      ).toEqual([...names].sort());
    }
    // The wildcard reading would have found more: proof the cases above can tell the two apart.
    expect(model.filter((r) => /r.s/i.test([r.name, ...r.notes].join(' '))).length).toBeGreaterThan(1);
  });

  it('sorts by each sortable column in both directions, with stable pages', async () => {
    for (const column of sortable) {
      for (const direction of ['asc', 'desc'] as const) {
        const sort = `${column}:${direction}`;
        const expected = expectedOrder(model, column, direction);
        const { html } = await get(`?sort=${sort}&perPage=100`);
        const table = readTable(html);
        expect(table.state.sort).toBe(sort);
        expect(table.ids, sort).toEqual(expected);
        // Page by page (10 per page) gives the very same sequence: no row twice, none missing.
        const paged: string[] = [];
        for (let page = 1; page <= Math.ceil(TOTAL / 10); page++) {
          const { html: pageHtml } = await get(`?sort=${sort}&page=${page}&perPage=10`, { xhr: true });
          paged.push(...readTable(pageHtml).ids);
        }
        expect(paged, `${sort} paged`).toEqual(expected);
      }
    }
    // Threat is by severity, not alphabetically: low < medium < high.
    const { html } = await get('?sort=threat:asc&perPage=100');
    const threatOf = new Map(model.map((r) => [r.id, r.threat]));
    const order = readTable(html).ids.map((id) => threatOf.get(id));
    expect(order.indexOf('medium')).toBeGreaterThan(order.lastIndexOf('low'));
    expect(order.indexOf('high')).toBeGreaterThan(order.lastIndexOf('medium'));
    // A sort within a search keeps to the matches.
    const searched = readTable((await get('?search=systems&sort=name:desc&perPage=100')).html);
    expect(searched.ids).toEqual(expectedOrder(matches(model, 'systems'), 'name', 'desc'));
  });

  it('the live-region summary names the sort, the count and the search', async () => {
    const sorted = readTable((await get('?sort=name:desc')).html);
    expect(sorted.summary).toBe(`Sorted by name, descending — ${TOTAL} competitors`);
    const one = readTable((await get('?search=quill&sort=threat:asc', { xhr: true })).html);
    expect(one.summary).toBe('Sorted by threat, ascending — 1 competitor matching “quill”');
    const none = readTable((await get('?search=zzzz')).html);
    expect(none.summary).toBe('Default order — 0 competitors matching “zzzz”');
  });

  it('counts exactly up to 1,000 matches and estimates (shown as such) above, with every page reachable', async () => {
    expect(EXACT_COUNT_LIMIT).toBe(1_000);
    const all = await listCompetitors(app.db.pool, { search: '', page: 1, perPage: 15 });
    expect(all.count).toEqual({ value: TOTAL, exact: true });
    expect(all.lastPage).toBe(Math.ceil(TOTAL / 15));
    const systems = await listCompetitors(app.db.pool, { search: 'systems', page: 1, perPage: 15 });
    expect(systems.count).toEqual({ value: fillerWords.length, exact: true });
    expect(readTable((await get('?search=systems')).html).summary).toBe(
      `Default order — ${fillerWords.length} competitors matching “systems”`,
    );

    // Bulk rows written straight into the read model (a thousand commands would take too long here):
    // 999 matches of "bulkrow" are still counted exactly.
    const insertBulk = async (from: number, to: number) => {
      await app.db.pool.query(
        `INSERT INTO competitor_list (id, name, website, segment_id, segment_name, threat, headquarters, rank,
           version, created_at, updated_at)
         SELECT gen_random_uuid(), 'Bulkrow ' || n, NULL, 'smb', 'SMB', 'low', NULL, $3::int + n, 1, now(), now()
         FROM generate_series($1::int, $2::int) AS n`,
        [from, to, TOTAL],
      );
    };
    await insertBulk(1, EXACT_COUNT_LIMIT - 1);
    const below = await listCompetitors(app.db.pool, { search: 'bulkrow', page: 1, perPage: 15 });
    expect(below.count).toEqual({ value: EXACT_COUNT_LIMIT - 1, exact: true });
    expect(readTable((await get('?search=bulkrow', { xhr: true })).html).summary).toBe(
      'Default order — 999 competitors matching “bulkrow”',
    );

    // Two more: above the limit the count is an estimate, and says so.
    await insertBulk(EXACT_COUNT_LIMIT, EXACT_COUNT_LIMIT + 1);
    const above = await listCompetitors(app.db.pool, { search: 'bulkrow', page: 1, perPage: 15 });
    expect(above.count.exact).toBe(false);
    expect(above.count.value).toBeGreaterThan(EXACT_COUNT_LIMIT);
    expect(readTable((await get('?search=bulkrow', { xhr: true })).html).summary).toMatch(
      /^Default order — about [\d,]+ competitors matching “bulkrow”$/,
    );
    // The real last page is still reachable, and a page past it lands there.
    const realLast = Math.ceil((EXACT_COUNT_LIMIT + 1) / 15);
    const past = readTable((await get('?search=bulkrow&page=999999', { xhr: true })).html);
    expect(past.state.page).toBe(realLast);
    expect(past.ids).toHaveLength((EXACT_COUNT_LIMIT + 1) % 15 || 15);
    const farPast = readTable((await get('?search=bulkrow&page=99999999999999999999', { xhr: true })).html);
    expect(farPast.state.page).toBe(realLast);
    expect(farPast.ids).toEqual(past.ids);
    // Without a search, the count (from the dense ranks) is exact at any size.
    const unfiltered = await listCompetitors(app.db.pool, { search: '', page: 1, perPage: 15 });
    expect(unfiltered.count).toEqual({ value: TOTAL + EXACT_COUNT_LIMIT + 1, exact: true });
  });
});
