import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseBackends } from '#tests/support/environment.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';
import type { TestClient } from '#tests/support/test-client.ts';

/**
 * A table's header shows the order its rows are in (WAI-ARIA `aria-sort`, the arrow) also when no `sort`
 * is given: the column of the table's default order (its query's fallback) reads as sorted that way, and
 * its header toggles to the other direction, exactly as when that sort is asked for by name. It showed
 * `none` for every column, and the default column's header asked for the direction already shown.
 */

interface Header {
  ariaSort: string;
  /** The `sort` its header's form asks for next. */
  next: string;
  icon: string;
}

/** The sortable headers of a rendered table, by column. */
function headersOf(html: string): Record<string, Header> {
  const headers: Record<string, Header> = {};
  const th =
    /<th scope="col" aria-sort="([a-z]+)"[^>]*><form[^>]*data-sort="([a-z_]+)"[^>]*>[\s\S]*?name="sort" value="([^"]*)"[\s\S]*?sort-button__icon"[^>]*>([^<]*)</g;
  for (const [, ariaSort = '', column = '', next = '', icon = ''] of html.matchAll(th))
    headers[column] = { ariaSort, next, icon };
  return headers;
}

const tables = [
  { path: '/competitors', who: 'viewer', column: 'rank', shown: 'ascending', icon: '▲', toggle: 'rank:desc' },
  { path: '/audit', who: 'admin', column: 'time', shown: 'descending', icon: '▼', toggle: 'time:asc' },
  { path: '/users', who: 'admin', column: 'name', shown: 'ascending', icon: '▲', toggle: 'name:desc' },
] as const;

describe.each(databaseBackends)('the default order in table headers on %s', (backend) => {
  let app: TestApp;
  const clients = new Map<string, TestClient>();

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: true });
    for (const who of ['viewer', 'admin'] as const) clients.set(who, await app.client(who));
  });
  afterAll(async () => app?.close());

  it.each(tables)(
    '$path without a sort shows $column as $shown, as with that sort given; choosing it sorts it ascending first, as the seed says',
    async (table) => {
      const client = clients.get(table.who) as TestClient;
      const explicit = table.shown === 'ascending' ? `${table.column}:asc` : `${table.column}:desc`;
      // The seed: "Choosing a column sorts it ascending … Any other case sets ascending": without a sort
      // chosen, the default column's header asks for ascending too; with its sort chosen, for the other one.
      for (const [query, xhr, next] of [
        ['', false, `${table.column}:asc`],
        ['?search=&sort=&page=1&perPage=15', true, `${table.column}:asc`],
        [`?sort=${explicit}`, false, table.toggle],
      ] as const) {
        const response = await client.get(`${table.path}${query}`, { xhr });
        expect(response.status).toBe(200);
        const headers = headersOf(await response.text());
        expect(Object.keys(headers).length, `${table.path}${query}`).toBeGreaterThan(1);
        expect(headers[table.column], `${table.path}${query}`).toEqual({
          ariaSort: table.shown,
          next,
          icon: table.icon,
        });
        // Every other column is not sorted, and its header asks for its ascending order.
        for (const [column, header] of Object.entries(headers).filter(([c]) => c !== table.column))
          expect(header, `${table.path}${query} ${column}`).toEqual({
            ariaSort: 'none',
            next: `${column}:asc`,
            icon: '↕',
          });
      }
      // The other direction, asked for by name, is shown as such and toggles back.
      const other = await client.get(`${table.path}?sort=${table.toggle}`);
      expect(headersOf(await other.text())[table.column]).toMatchObject({
        ariaSort: table.shown === 'ascending' ? 'descending' : 'ascending',
        next: explicit,
      });
    },
  );

  it('the rows without a sort are in the order the header shows', async () => {
    const viewer = clients.get('viewer') as TestClient;
    const ids = async (query: string) =>
      [
        ...(await (await viewer.get(`/competitors${query}`)).text()).matchAll(
          /data-row-id="([0-9a-f-]{36})"/g,
        ),
      ].map((m) => m[1]);
    const shown = await ids('');
    expect(shown.length).toBeGreaterThan(1);
    expect(shown).toEqual(await ids('?sort=rank:asc'));
    expect(shown).not.toEqual(await ids('?sort=rank:desc'));
  });
});
