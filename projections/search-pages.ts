import type { Queryable } from '#infra/db/database.ts';

/**
 * Deep pages of a search (docs/decisions/0015-search-page-cache.md). Past page 1 a search must know
 * every match before the page, so its first deep page reads and counts the whole matching set, and sorts
 * it only as far as the pages around the one asked for, from the nearer end of the order. Those pages'
 * ids are kept with the table's version (infra/migrations/023_table_versions.sql); the search's next
 * pages are a read of 15 rows by id, checked in the same statement against the version: any write to the
 * table since then, from anyone, makes it read the matches again.
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

/**
 * One search in one sort, as of one version of the table: a stretch of its matching ids in order, the
 * whole of them or (as a first visit reads them) the pages around the one asked for.
 */
export interface MatchSet {
  version: string;
  ids: readonly string[];
  /** The place of `ids[0]` among all the matches in order (0 when omitted: all of them from the first). */
  from?: number;
  /** How many match in all (`ids.length` when omitted: all of them). */
  total?: number;
}

export interface SearchPageCache {
  /** Pages of matches read and kept on each side of the page asked for, when a search's matches are read. */
  readonly windowPages: number;
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
  /** Pages kept on each side of a deep page when its matches are read (default `WINDOW_PAGES`). */
  windowPages?: number;
}

/** Matches read on each side of the page asked for, when a search's deep page is read: 20 pages. */
export const WINDOW_PAGES = 20;

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
    windowPages: Math.max(0, Math.floor(options.windowPages ?? WINDOW_PAGES)),
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

/** One term of an allow-listed ORDER BY: its expression, direction and (when written) where nulls go. */
interface OrderTerm {
  expression: string;
  descending: boolean;
  nulls?: 'FIRST' | 'LAST';
}

/** An ORDER BY of the calling code (constants only, `expr ASC|DESC [NULLS FIRST|LAST]`, …) as terms. */
export function orderTerms(order: string): OrderTerm[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of order) {
    if (char === '(') depth++;
    if (char === ')') depth--;
    if (char === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += char;
  }
  parts.push(current);
  return parts.map((part) => {
    const found = /^\s*(.+?)\s+(ASC|DESC)(?:\s+NULLS\s+(FIRST|LAST))?\s*$/i.exec(part);
    if (!found?.[1] || !found[2]) throw new Error(`An ORDER BY term needs its direction: ${part}`);
    const nulls = found[3]?.toUpperCase() as OrderTerm['nulls'];
    return {
      expression: found[1],
      descending: found[2].toUpperCase() === 'DESC',
      ...(nulls ? { nulls } : {}),
    };
  });
}

/** The match set's column for each term: `m_id` for the id itself, `m_k0`, `m_k1`… for the keys. */
const termColumns = (terms: readonly OrderTerm[], id: string) =>
  terms.map((term, i) => (term.expression === id ? 'm_id' : `m_k${i}`));

/**
 * The terms over the match set's columns, as written or reversed. The reverse of a total order (each ends
 * in the unique id) flips every direction and every written NULLS (an unwritten one follows the direction
 * by itself: nulls come last ascending and first descending).
 */
const orderOver = (terms: readonly OrderTerm[], columns: readonly string[], reversed: boolean) =>
  terms
    .map((term, i) => {
      const descending = term.descending !== reversed;
      const nulls = term.nulls && (reversed ? (term.nulls === 'FIRST' ? 'LAST' : 'FIRST') : term.nulls);
      return `${columns[i]} ${descending ? 'DESC' : 'ASC'}${nulls ? ` NULLS ${nulls}` : ''}`;
    })
    .join(', ');

/**
 * Page `page` of the search `pattern` in the order `order` (an allow-listed ORDER BY ending in the id),
 * served from `cache` while the table's version holds. Returns undefined when the table kept changing
 * between the two reads (twice): the caller computes that page on its own.
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
  const terms = orderTerms(order);
  const columns = termColumns(terms, table.id);
  const keys = terms.flatMap((term, i) =>
    columns[i] === 'm_id' ? [] : [`${term.expression} AS ${columns[i]}`],
  );
  const forward = orderOver(terms, columns, false);
  for (let attempt = 0; attempt < 2; attempt++) {
    // Every match is read once (its id and sort keys only, into m) and counted; only the pages around the
    // one asked for are kept, sorted from whichever end of the order is nearer (the last page is the
    // reverse order's first: a sort bounded to a page or two, not a sort of every match), and sent as
    // one string. The version is read in the same statement, so it is the version of these matches.
    const { rows } = await db.query<{ version: string | null; n: number; lo: number; ids: string | null }>(
      `WITH m AS MATERIALIZED (SELECT ${[`${table.id} AS m_id`, ...keys].join(', ')}
                               FROM ${table.table} WHERE ${table.where}),
         p AS (SELECT n, least($2::bigint, greatest(1, ceil(n / $3::numeric)))::int AS page
               FROM (SELECT count(*)::int AS n FROM m) c),
         w AS (SELECT n, greatest(0, (page - 1) * $3::int - $4::int) AS lo, least(n, page * $3::int + $4::int) AS hi
               FROM p)
       SELECT ${versionSql(table.table)} AS version, w.n, w.lo,
         CASE WHEN w.lo <= w.n - w.hi
           THEN (SELECT string_agg(m_id::text, ',' ORDER BY ${forward})
                 FROM (SELECT * FROM m ORDER BY ${forward} OFFSET w.lo LIMIT w.hi - w.lo) s)
           ELSE (SELECT string_agg(m_id::text, ',' ORDER BY ${forward})
                 FROM (SELECT * FROM m ORDER BY ${orderOver(terms, columns, true)} OFFSET w.n - w.hi LIMIT w.hi - w.lo) s)
         END AS ids
       FROM w`,
      [pattern, page, perPage, cache.windowPages * perPage],
    );
    const version = rows[0]?.version;
    // A table without a version (not versioned, or never written) cannot be checked: no cache.
    if (!version) return undefined;
    const ids = rows[0]?.ids;
    const matches: MatchSet = {
      version,
      ids: ids ? ids.split(',') : [],
      from: rows[0]?.lo ?? 0,
      total: rows[0]?.n ?? 0,
    };
    cache.set(key, matches);
    const served = await readPage<R>(db, table, matches, page, perPage);
    if (served) return served;
  }
  return undefined;
}

/**
 * The page's rows by id, if the kept stretch of matches holds the whole page and the table is still at
 * their version (one statement).
 */
async function readPage<R>(
  db: Queryable,
  table: SearchTable,
  matches: MatchSet,
  requested: number,
  perPage: number,
): Promise<SearchPage<R> | undefined> {
  const total = matches.total ?? matches.ids.length;
  const from = matches.from ?? 0;
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const page = Math.min(Math.max(1, requested), lastPage);
  const start = (page - 1) * perPage;
  const end = Math.min(total, page * perPage);
  if (start < from || end > from + matches.ids.length) return undefined;
  const ids = matches.ids.slice(start - from, end - from);
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
