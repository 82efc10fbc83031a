import type { Queryable } from '#infra/db/database.ts';
import { prepared } from '#infra/db/prepared.ts';

/**
 * One sort of a list table with a page index (infra/migrations/015_page_index.sql,
 * docs/decisions/0011-page-index.md): its bucket table, and the sort key exactly as the migration
 * registered it (the expressions, then the unique tie-breaker). Descending sorts read their key
 * backwards. Every name here is a constant of the code, never input.
 */
export interface PageIndexSort {
  table: string;
  bucketTable: string;
  keys: readonly string[];
  id: string;
  backwards: boolean;
}

export interface IndexedPage<R> {
  rows: R[];
  /** Rows in the table (exact). */
  total: number;
  /** The page shown: a page past the end becomes the last page. */
  page: number;
}

const sqlCache = new Map<string, string>();

/**
 * Page `page` (1-based) of the whole table in the sort's order, in one statement (one snapshot):
 * a running sum over the buckets finds the one holding the page's first row, an index-only skip inside
 * it finds that row's key, and a keyset read returns the page. Cost does not grow with the page number.
 */
export async function pageBySort<R>(
  db: Queryable,
  sort: PageIndexSort,
  columns: string,
  page: number,
  perPage: number,
): Promise<IndexedPage<R>> {
  const limit = Math.floor(perPage);
  const cacheKey = `${sort.bucketTable}|${sort.backwards}|${limit}|${columns}`;
  let sql = sqlCache.get(cacheKey);
  if (!sql) {
    sql = pageSql(sort, columns, limit);
    sqlCache.set(cacheKey, sql);
  }
  const { rows } = await db.query<R & { pi_total: number; pi_page: number; pi_count: number }>(
    prepared(sql, [page, limit]),
  );
  const first = rows[0];
  // A backwards last page is shorter than perPage: only its window's rows belong to it.
  const result = rows
    .slice(0, first?.pi_count ?? 0)
    .map(({ pi_total: _t, pi_page: _p, pi_count: _c, ...row }) => row as R);
  if (sort.backwards) result.reverse();
  return { rows: result, total: first?.pi_total ?? 0, page: first?.pi_page ?? 1 };
}

/** `pageBySort` for a data table's query, with its last page (the count is exact: the buckets hold every row). */
export async function indexedPage<R>(
  db: Queryable,
  sort: PageIndexSort,
  columns: string,
  query: { page: number; perPage: number },
): Promise<IndexedPage<R> & { lastPage: number }> {
  const indexed = await pageBySort<R>(db, sort, columns, query.page, query.perPage);
  return { ...indexed, lastPage: Math.max(1, Math.ceil(indexed.total / query.perPage)) };
}

/**
 * More than any bucket holds once its writing transaction commits (buckets split above 2 × 1,000 rows,
 * and a sort is rebuilt if one ever passes 8 × 1,000). Bounding the skip with a constant keeps the
 * planner's cost estimate small at any table size (an unbounded OFFSET is costed as 10% of the table,
 * which at 1M rows tipped the statement into JIT compilation: 140 ms for a 2 ms query).
 */
const MAX_SKIP = 8_001;

function pageSql(sort: PageIndexSort, columns: string, perPage: number): string {
  const bucketColumns = [...sort.keys.map((_, i) => `pk_${i + 1}`), 'pk_id'];
  const list = bucketColumns.join(', ');
  const key = [...sort.keys, sort.id].join(', ');
  const keyAs = [...sort.keys.map((k, i) => `${k} AS pk_${i + 1}`), `${sort.id} AS pk_id`].join(', ');
  const from = (cte: string) => bucketColumns.map((c) => `(SELECT ${c} FROM ${cte})`).join(', ');
  // The window [lo, hi) of positions in ascending key order; a backwards sort counts from the end.
  const window = sort.backwards
    ? 'greatest(0, t - page * $2::bigint) AS lo, t - (page - 1) * $2::bigint AS hi'
    : '(page - 1) * $2::bigint AS lo, least(t, page * $2::bigint) AS hi';
  return `WITH tot AS (SELECT coalesce(sum(pk_n), 0)::bigint AS t FROM ${sort.bucketTable}),
  pg AS (SELECT t, least($1::bigint, greatest(1, ceil(t / $2::numeric)))::bigint AS page FROM tot),
  win AS (SELECT t, page, ${window} FROM pg),
  b AS (SELECT ${list}, pk_n, sum(pk_n) OVER (ORDER BY ${list}) AS upto FROM ${sort.bucketTable}),
  s AS (SELECT ${list}, (SELECT lo FROM win) - (upto - pk_n) AS skip FROM b
        WHERE upto > (SELECT lo FROM win) ORDER BY upto, ${list} LIMIT 1),
  first AS (SELECT * FROM (SELECT ${keyAs} FROM ${sort.table} WHERE (${key}) >= (${from('s')})
                           ORDER BY ${key} LIMIT ${MAX_SKIP}) w
            ORDER BY ${list} OFFSET (SELECT skip FROM s) LIMIT 1)
SELECT ${columns}, (SELECT t FROM win)::int AS pi_total, (SELECT page FROM win)::int AS pi_page,
  (SELECT hi - lo FROM win)::int AS pi_count
FROM ${sort.table} WHERE (${key}) >= (${from('first')})
ORDER BY ${key} LIMIT ${perPage}`;
}

/** Both directions of one column over the same key: ascending reads forwards, descending backwards. */
export const bothWays = (
  table: string,
  bucketTable: string,
  keys: readonly string[],
  id: string,
): { asc: PageIndexSort; desc: PageIndexSort } => ({
  asc: { table, bucketTable, keys, id, backwards: false },
  desc: { table, bucketTable, keys, id, backwards: true },
});
