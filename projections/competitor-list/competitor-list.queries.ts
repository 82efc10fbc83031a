import type { Queryable } from '#infra/db/database.ts';
import { prepared } from '#infra/db/prepared.ts';
import type { CompetitorRow } from './competitor-row.ts';
import { fromListRow, isoTimeColumns, type ListDbRow } from './competitor-list.writer.ts';
import { bothWays, indexedPage, type PageIndexSort } from '../page-index.ts';
import {
  containsPattern,
  foldedSearch,
  countedSearchPage,
  type SearchPageCache,
  type SearchTable,
} from '../search-pages.ts';

export const competitorSortColumns = ['rank', 'name', 'segment', 'threat', 'updated'] as const;
export type CompetitorSortColumn = (typeof competitorSortColumns)[number];
/** The order without a `sort` parameter: by rank, first first. The table's header shows it as its sort. */
export const competitorDefaultSort = { column: 'rank', direction: 'asc' } as const;

/** Sort keys → SQL, from an allow-list only. Each ends in `id` so pages are stable. */
const orderBy: Record<CompetitorSortColumn, { asc: string; desc: string }> = {
  rank: { asc: 'rank ASC, id ASC', desc: 'rank DESC, id DESC' },
  name: { asc: 'lower(name) ASC, id ASC', desc: 'lower(name) DESC, id DESC' },
  segment: { asc: 'segment_name ASC, id ASC', desc: 'segment_name DESC, id DESC' },
  threat: { asc: 'threat_level ASC, id ASC', desc: 'threat_level DESC, id DESC' },
  updated: { asc: 'updated_at ASC, id ASC', desc: 'updated_at DESC, id DESC' },
};

/**
 * The page index of each sort but rank (ranks are dense: a rank is its own position). Keys as
 * registered in infra/migrations/015_page_index.sql; their order is `orderBy`'s.
 */
const pageIndexes: Record<
  Exclude<CompetitorSortColumn, 'rank'>,
  { asc: PageIndexSort; desc: PageIndexSort }
> = {
  name: bothWays('competitor_list', 'competitor_list_pages_name', ['lower(name)'], 'id'),
  segment: bothWays('competitor_list', 'competitor_list_pages_segment', ['segment_name'], 'id'),
  threat: bothWays('competitor_list', 'competitor_list_pages_threat', ['threat_level'], 'id'),
  updated: bothWays('competitor_list', 'competitor_list_pages_updated', ['updated_at'], 'id'),
};

/**
 * Above this many search matches the count is the planner's estimate, shown as "about N": counting
 * tens of thousands of trigram matches exactly costs more than fetching the page (measured at 1M rows:
 * a bounded count to 10,001 took 24 ms, to 1,001 took 11 ms, the page itself under 1 ms).
 */
export const EXACT_COUNT_LIMIT = 1_000;

export interface ListQuery {
  search: string;
  sort?: { column: CompetitorSortColumn; direction: 'asc' | 'desc' };
  page: number;
  perPage: number;
}

export interface ListResult {
  rows: CompetitorRow[];
  count: { value: number; exact: boolean };
  /** The page actually shown (a page past the end becomes the last page). */
  page: number;
  lastPage: number;
}

type DbRow = ListDbRow;

const selectColumns = `id, name, website, segment_id, segment_name, threat, headquarters, rank, strengths, weaknesses,
  pricing, general, note_meta, version, ${isoTimeColumns}`;

/** The competitor list as searched (deep pages of a search: `cachedSearchPage`). */
const searchTable: SearchTable = {
  table: 'competitor_list',
  id: 'id',
  idType: 'uuid',
  where: `search_text LIKE ${foldedSearch}`,
  columns: selectColumns,
};

/**
 * A page of the competitor table. With `pages`, a search's pages past the first are served from its
 * sorted matches while the table is unchanged.
 */
export async function listCompetitors(
  db: Queryable,
  query: ListQuery,
  pages?: SearchPageCache,
): Promise<ListResult> {
  const sort = query.sort ?? competitorDefaultSort;
  if (!query.search && sort.column !== 'rank') {
    // Any page of the whole table, with its exact count, in one statement.
    const indexed = await indexedPage<DbRow>(
      db,
      pageIndexes[sort.column][sort.direction],
      selectColumns,
      query,
    );
    return {
      rows: indexed.rows.map(fromListRow),
      count: { value: indexed.total, exact: true },
      page: indexed.page,
      lastPage: indexed.lastPage,
    };
  }
  if (!query.search) return rankPage(db, query, sort.direction);
  // From here on, a search.
  const where = `WHERE search_text LIKE ${foldedSearch}`;
  const params: unknown[] = [containsPattern(query.search)];
  if (query.page > 1) {
    const cached = await countedSearchPage<DbRow>(
      db,
      pages,
      searchTable,
      orderBy[sort.column][sort.direction],
      containsPattern(query.search),
      query.page,
      query.perPage,
    );
    if (cached) return { ...cached, rows: cached.rows.map(fromListRow) };
    return deepSearchPage(db, query, sort);
  }
  // The count and the requested page are independent: ask for both at once (two connections on
  // Postgres). Only a page past the end needs a second look.
  const [count, requested] = await Promise.all([
    countCompetitors(db, where, params),
    fetchPage(db, query, where, params, query.page),
  ]);
  const lastPage = Math.max(1, Math.ceil(count.value / query.perPage));
  let page = query.page;
  let rows = requested;
  if (count.exact && page > lastPage) {
    page = lastPage;
    rows = await fetchPage(db, query, where, params, page);
  }
  if (rows.length === 0 && page > 1) {
    // Past the end of an estimated count: find the real last page.
    const exact = await exactCount(db, where, params);
    page = Math.max(1, Math.ceil(exact / query.perPage));
    rows = await fetchPage(db, query, where, params, page);
    return { rows, count: { value: exact, exact: true }, page, lastPage: page };
  }
  // A short page ends the results: then the total is known exactly, whatever the estimate said.
  if (!count.exact && rows.length < query.perPage) {
    const value = (page - 1) * query.perPage + rows.length;
    return { rows, count: { value, exact: true }, page, lastPage: page };
  }
  // An estimate must never hide pages that exist: stretch it past the page we are on.
  const shownLastPage = count.exact
    ? lastPage
    : Math.max(lastPage, page + (rows.length === query.perPage ? 1 : 0));
  return { rows, count, page, lastPage: shownLastPage };
}

/**
 * The whole table in rank order (the default view): the count and the page in one statement. Ranks are
 * dense (1..n) and unique, so the highest rank is the exact count, a page past the end becomes the last
 * page, and any page is an index range seek, so page 10,000 costs what page 1 costs. One round trip
 * instead of two: on Postgres that is one connection and one statement per page view, not two.
 */
async function rankPage(db: Queryable, query: ListQuery, direction: 'asc' | 'desc'): Promise<ListResult> {
  const seek =
    direction === 'asc'
      ? 'WHERE rank > (p.page - 1) * $2::bigint ORDER BY rank ASC'
      : 'WHERE rank <= p.n - (p.page - 1) * $2::bigint ORDER BY rank DESC';
  const { rows } = await db.query<Partial<DbRow> & { m_total: number; m_page: number }>(
    prepared(
      `WITH t AS (SELECT coalesce(max(rank), 0)::int AS n FROM competitor_list),
       p AS (SELECT n, least($1::bigint, greatest(1, ceil(n / $2::numeric)))::int AS page FROM t)
     SELECT p.n AS m_total, p.page AS m_page, c.*
     FROM p LEFT JOIN LATERAL (SELECT ${selectColumns} FROM competitor_list ${seek} LIMIT ${query.perPage}) c ON true`,
      [query.page, query.perPage],
    ),
  );
  const total = rows[0]?.m_total ?? 0;
  return {
    // An empty table still answers its one row of totals, with no competitor in it.
    rows: rows.filter((r) => r.id != null).map((r) => fromListRow(r as DbRow)),
    count: { value: total, exact: true },
    page: rows[0]?.m_page ?? 1,
    lastPage: Math.max(1, Math.ceil(total / query.perPage)),
  };
}

async function fetchPage(
  db: Queryable,
  query: ListQuery,
  where: string,
  params: unknown[],
  page: number,
): Promise<CompetitorRow[]> {
  const offset = (page - 1) * query.perPage;
  const sort = query.sort ?? competitorDefaultSort;
  // Searches sort only the matching keys and ids, then read the page's rows: a deep page of a large
  // match sorts narrow tuples instead of whole rows with their notes.
  const order = orderBy[sort.column][sort.direction];
  const { rows } = await db.query(
    `SELECT ${selectColumns} FROM competitor_list
     WHERE id IN (SELECT id FROM competitor_list ${where} ORDER BY ${order} LIMIT ${query.perPage} OFFSET ${offset})
     ORDER BY ${order}`,
    params,
  );
  return rows.map((r) => fromListRow(r as DbRow));
}

/** Each sort's key over the matching set (`m`), for searches past page 1. */
const matchKeys: Record<CompetitorSortColumn, string> = {
  rank: 'rank',
  name: 'lower(name)',
  segment: 'segment_name',
  threat: 'threat_level',
  updated: 'updated_at',
};

/**
 * A search's page past the first: the matching set is read once (through the trigram index), counted
 * exactly, and only its keys and ids are sorted; the page's rows are read afterwards. Its cost grows with
 * the number of matches, not with the page number, and a page past the end becomes the last page.
 */
async function deepSearchPage(
  db: Queryable,
  query: ListQuery,
  sort: NonNullable<ListQuery['sort']>,
): Promise<ListResult> {
  const direction = sort.direction === 'asc' ? 'ASC' : 'DESC';
  const { rows } = await db.query<DbRow & { m_total: number; m_page: number }>(
    `WITH m AS MATERIALIZED (SELECT id, ${matchKeys[sort.column]} AS k FROM competitor_list WHERE search_text LIKE ${foldedSearch}),
       c AS (SELECT count(*)::int AS n FROM m),
       p AS (SELECT n, least($2::bigint, greatest(1, ceil(n / $3::numeric)))::int AS page FROM c),
       ids AS (SELECT id FROM m ORDER BY k ${direction}, id ${direction}
               OFFSET (SELECT (page - 1) * $3::int FROM p) LIMIT $3::int)
     SELECT ${selectColumns}, (SELECT n FROM p) AS m_total, (SELECT page FROM p) AS m_page
     FROM competitor_list WHERE id IN (SELECT id FROM ids) ORDER BY ${orderBy[sort.column][sort.direction]}`,
    [containsPattern(query.search), query.page, query.perPage],
  );
  const total = rows[0]?.m_total ?? 0;
  return {
    rows: rows.map(fromListRow),
    count: { value: total, exact: true },
    page: rows[0]?.m_page ?? 1,
    lastPage: Math.max(1, Math.ceil(total / query.perPage)),
  };
}

async function countCompetitors(
  db: Queryable,
  where: string,
  params: unknown[],
): Promise<{ value: number; exact: boolean }> {
  // When the planner already expects far more matches than we would count, its estimate is the answer:
  // even a bounded count must build the whole index bitmap first (about 12 ms for 50,000 matches).
  const estimate = await estimateCount(db, where, params);
  if (estimate >= PLANNER_TRUST_FACTOR * EXACT_COUNT_LIMIT) return { value: estimate, exact: false };
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM competitor_list ${where} LIMIT ${EXACT_COUNT_LIMIT + 1}) t`,
    params,
  );
  const bounded = rows[0]?.n ?? 0;
  if (bounded <= EXACT_COUNT_LIMIT) return { value: bounded, exact: true };
  return { value: Math.max(estimate, EXACT_COUNT_LIMIT + 1), exact: false };
}

/** How far the planner's estimate must exceed the exact-count limit before it is used on its own. */
const PLANNER_TRUST_FACTOR = 10;

/** The planner's row estimate: instant at any size, shown to people as "about N". */
async function estimateCount(db: Queryable, where: string, params: unknown[]): Promise<number> {
  const { rows } = await db.query<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }>(
    `EXPLAIN (FORMAT JSON) SELECT 1 FROM competitor_list ${where}`,
    params,
  );
  const estimate = rows[0]?.['QUERY PLAN'][0].Plan['Plan Rows'] ?? 0;
  // Round so the figure does not pretend to be exact.
  const magnitude = 10 ** Math.max(0, Math.floor(Math.log10(Math.max(estimate, 1))) - 1);
  return Math.round(estimate / magnitude) * magnitude;
}

async function exactCount(db: Queryable, where: string, params: unknown[]): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM competitor_list ${where}`,
    params,
  );
  return rows[0]?.n ?? 0;
}

export async function findCompetitor(db: Queryable, id: string): Promise<CompetitorRow | undefined> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
  const { rows } = await db.query(`SELECT ${selectColumns} FROM competitor_list WHERE id = $1`, [id]);
  const row = rows[0] as Parameters<typeof fromListRow>[0] | undefined;
  return row ? fromListRow(row) : undefined;
}
