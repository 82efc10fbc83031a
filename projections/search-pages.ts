import type { Queryable } from '#infra/db/database.ts';

/**
 * Deep pages of a search (docs/decisions/0015-search-page-cache.md). Past page 1 a search must know
 * every match before the page, so its first deep page reads and sorts the whole matching set. That
 * set, as the sorted ids, is kept with the table's version (infra/migrations/023_table_versions.sql);
 * the search's next pages are a read of 15 rows by id, checked in the same statement against the
 * version: any write to the table since then, from anyone, makes it read the matches again.
 */

/**
 * `%term%` as the searched text is folded (infra/migrations/030_search_text_folding.sql), then with its
 * wildcards escaped, for `search_text LIKE ${foldedSearch}`: NFKC-normalized (here, before the escaping,
 * so that a fullwidth ％ or ＿ becomes a literal % or _, never a wildcard) and without invisible
 * characters. The case is folded by Postgres (`foldedSearch`), as the stored text was, never by
 * JavaScript, whose `toLowerCase` differs for some letters (a final Σ becomes ς, İ becomes i + a
 * combining dot) so that a name could not be found by itself.
 */
export const containsPattern = (term: string): string =>
  `%${term
    .normalize('NFKC')
    .replace(/\p{Default_Ignorable_Code_Point}/gu, '')
    .replace(/[\\%_]/g, '\\$&')}%`;

/**
 * The search (`$1`, a `containsPattern`) folded as the searched text is, by the same function
 * (search_fold: lower case, and the final sigma ς as σ, so Greek is found however its sigma was typed).
 * Its NFKC and invisible characters are already done by containsPattern, and doing them again changes
 * nothing, so the one definition serves both sides of the LIKE.
 */
export const foldedSearch = `search_fold($1)`;

/** One search in one sort: its matching ids in order, as of one version of the table. */
export interface MatchSet {
  version: string;
  ids: readonly string[];
}

export interface SearchPageCache {
  get(key: string): MatchSet | undefined;
  set(key: string, matches: MatchSet): void;
}

export interface SearchPageCacheOptions {
  /** Ids kept in all (about 80 bytes each): the least recently used searches go first. */
  maxIds?: number;
  /** A search matching more is not kept (it would push out many smaller ones). */
  maxIdsPerSearch?: number;
  /**
   * Searches kept in all, whatever their size (default 10,000). The id budget alone let searches that
   * match nothing pile up without limit: each costs its key (up to ~400 characters) and entry, so a
   * stream of distinct searches on page 2 grew the heap by ~630 bytes per request, forever.
   */
  maxSearches?: number;
}

export function createSearchPageCache(options: SearchPageCacheOptions = {}): SearchPageCache {
  const maxIds = options.maxIds ?? 500_000;
  const maxIdsPerSearch = options.maxIdsPerSearch ?? 100_000;
  const maxSearches = options.maxSearches ?? 10_000;
  const entries = new Map<string, MatchSet>();
  let held = 0;
  const forget = (key: string) => {
    const old = entries.get(key);
    if (!old) return;
    held -= old.ids.length;
    entries.delete(key);
  };
  return {
    get(key) {
      const found = entries.get(key);
      if (!found) return undefined;
      // Most recently used last.
      entries.delete(key);
      entries.set(key, found);
      return found;
    },
    set(key, matches) {
      forget(key);
      if (matches.ids.length > maxIdsPerSearch) return;
      entries.set(key, matches);
      held += matches.ids.length;
      for (const oldest of entries.keys()) {
        if (held <= maxIds && entries.size <= maxSearches) break;
        forget(oldest);
      }
    },
  };
}

/** One table's searchable list: every name here is a constant of the calling code, never input. */
export interface SearchTable {
  table: string;
  /** The unique tie-breaker, and its type (`uuid`, `bigint`). */
  id: string;
  idType: string;
  /** The match condition over `$1` (a LIKE pattern). */
  where: string;
  columns: string;
}

export interface SearchPage<R> {
  rows: R[];
  total: number;
  /** The page shown: a page past the end becomes the last page. */
  page: number;
  lastPage: number;
}

const versionSql = (table: string) =>
  `(SELECT version::text FROM table_versions WHERE table_name = '${table}')`;

/**
 * Page `page` of the search `pattern` in the order `order` (an allow-listed ORDER BY ending in the id),
 * served from `cache` while the table's version holds. Returns undefined when the table kept changing
 * between the two reads (twice), or its matches are too many to keep: the caller computes that page
 * on its own.
 */
export async function cachedSearchPage<R>(
  db: Queryable,
  cache: SearchPageCache,
  table: SearchTable,
  order: string,
  pattern: string,
  page: number,
  perPage: number,
): Promise<SearchPage<R> | undefined> {
  const key = `${table.table}\u0000${order}\u0000${pattern}`;
  const cached = cache.get(key);
  if (cached) {
    const served = await readPage<R>(db, table, cached, page, perPage);
    if (served) return served;
  }
  for (let attempt = 0; attempt < 2; attempt++) {
    // One string, split here: parsing a 50,000-element array result costs more than the query's sort.
    const { rows } = await db.query<{ version: string | null; ids: string | null }>(
      `SELECT ${versionSql(table.table)} AS version,
              (SELECT string_agg(${table.id}::text, ',' ORDER BY ${order}) FROM ${table.table} WHERE ${table.where}) AS ids`,
      [pattern],
    );
    const version = rows[0]?.version;
    // A table without a version (not versioned, or never written) cannot be checked: no cache.
    if (!version) return undefined;
    const ids = rows[0]?.ids;
    const matches: MatchSet = { version, ids: ids ? ids.split(',') : [] };
    cache.set(key, matches);
    const served = await readPage<R>(db, table, matches, page, perPage);
    if (served) return served;
  }
  return undefined;
}

/** The page's rows by id, if the table is still at the match set's version (one statement). */
async function readPage<R>(
  db: Queryable,
  table: SearchTable,
  matches: MatchSet,
  requested: number,
  perPage: number,
): Promise<SearchPage<R> | undefined> {
  const total = matches.ids.length;
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const page = Math.min(Math.max(1, requested), lastPage);
  const ids = matches.ids.slice((page - 1) * perPage, page * perPage);
  const { rows } = await db.query<R & { m_version: string | null; m_id: string | null }>(
    `SELECT v.m_version, r.* FROM (SELECT ${versionSql(table.table)} AS m_version) v
     LEFT JOIN LATERAL (SELECT ${table.id}::text AS m_id, ${table.columns} FROM ${table.table}
                        WHERE ${table.id} = ANY($1::${table.idType}[])) r ON true`,
    [ids],
  );
  if (rows[0]?.m_version !== matches.version) return undefined;
  const byId = new Map(rows.filter((r) => r.m_id !== null).map((r) => [r.m_id, r]));
  if (byId.size !== ids.length) return undefined;
  return {
    rows: ids.map((id) => {
      const { m_version: _v, m_id: _i, ...row } = byId.get(id) as R & { m_version: unknown; m_id: unknown };
      return row as R;
    }),
    total,
    page,
    lastPage,
  };
}

/** `cachedSearchPage` as a data table's page, its total an exact count; nothing without a cache. */
export async function countedSearchPage<R>(
  db: Queryable,
  cache: SearchPageCache | undefined,
  table: SearchTable,
  order: string,
  pattern: string,
  page: number,
  perPage: number,
): Promise<{ rows: R[]; count: { value: number; exact: true }; page: number; lastPage: number } | undefined> {
  if (!cache) return undefined;
  const found = await cachedSearchPage<R>(db, cache, table, order, pattern, page, perPage);
  if (!found) return undefined;
  return {
    rows: found.rows,
    count: { value: found.total, exact: true },
    page: found.page,
    lastPage: found.lastPage,
  };
}
