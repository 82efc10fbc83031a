import type { Queryable } from '#infra/db/database.ts';
import { EXACT_COUNT_LIMIT as EXACT_LIMIT } from '../competitor-list/competitor-list.queries.ts';
import { bothWays, indexedPage, type PageIndexSort } from '../page-index.ts';
import {
  containsPattern,
  foldedSearch,
  countedSearchPage,
  type SearchPageCache,
  type SearchTable,
} from '../search-pages.ts';

export const auditSortColumns = ['time', 'actor', 'type', 'competitor'] as const;
export type AuditSortColumn = (typeof auditSortColumns)[number];
/** The order without a `sort` parameter: newest first. The table's header shows it as its sort. */
export const auditDefaultSort = { column: 'time', direction: 'desc' } as const;

const orderBy: Record<AuditSortColumn, { asc: string; desc: string }> = {
  time: { asc: 'at ASC, position ASC', desc: 'at DESC, position DESC' },
  actor: { asc: 'lower(actor_name) ASC, position ASC', desc: 'lower(actor_name) DESC, position DESC' },
  type: { asc: 'type ASC, position ASC', desc: 'type DESC, position DESC' },
  competitor: {
    asc: 'lower(competitor_name) ASC NULLS LAST, position ASC',
    desc: 'lower(competitor_name) DESC NULLS LAST, position DESC',
  },
};

/**
 * Each sort's page index (infra/migrations/015_page_index.sql), in `orderBy`'s order. Rows without a
 * competitor come last both ways, so that column has a key per direction, the descending one read backwards.
 */
const competitorKey = [`coalesce(lower(competitor_name), '')`];
const pageIndexes: Record<AuditSortColumn, { asc: PageIndexSort; desc: PageIndexSort }> = {
  time: bothWays('audit_log', 'audit_log_pages_time', ['at'], 'position'),
  actor: bothWays('audit_log', 'audit_log_pages_actor', ['lower(actor_name)'], 'position'),
  type: bothWays('audit_log', 'audit_log_pages_type', ['type'], 'position'),
  competitor: {
    asc: bothWays(
      'audit_log',
      'audit_log_pages_competitor',
      ['(competitor_name IS NULL)', ...competitorKey],
      'position',
    ).asc,
    desc: bothWays(
      'audit_log',
      'audit_log_pages_competitor_desc',
      ['(competitor_name IS NOT NULL)', ...competitorKey],
      'position',
    ).desc,
  },
};

const selectColumns = `position, at, actor_name AS "actorName", type, competitor_id AS "competitorId",
            competitor_name AS "competitorName", summary`;

export interface AuditRow {
  position: number;
  at: Date;
  actorName: string;
  type: string;
  competitorId: string | null;
  competitorName: string | null;
  summary: string;
}

const searchTable: SearchTable = {
  table: 'audit_log',
  id: 'position',
  idType: 'bigint',
  where: `search_text LIKE ${foldedSearch}`,
  columns: selectColumns,
};

/**
 * The audit log as a page of the shared data table; newest first unless sorted otherwise. With
 * `pages`, a search's pages past the first are served from its sorted matches while the log is unchanged.
 */
export async function listAudit(
  db: Queryable,
  query: {
    search: string;
    sort?: { column: AuditSortColumn; direction: 'asc' | 'desc' };
    page: number;
    perPage: number;
  },
  pages?: SearchPageCache,
): Promise<{ rows: AuditRow[]; count: { value: number; exact: boolean }; page: number; lastPage: number }> {
  const sort = query.sort ?? auditDefaultSort;
  if (!query.search) {
    const { rows, total, page, lastPage } = await indexedPage<AuditRow>(
      db,
      pageIndexes[sort.column][sort.direction],
      selectColumns,
      query,
    );
    return { rows, count: { value: total, exact: true }, page, lastPage };
  }
  // A page from the search's kept matches (read and kept on a miss), when a cache is given.
  const fromMatches = (page: number) =>
    countedSearchPage<AuditRow>(
      db,
      pages,
      searchTable,
      orderBy[sort.column][sort.direction],
      containsPattern(query.search),
      page,
      query.perPage,
    );
  if (query.page > 1) {
    const cached = await fromMatches(query.page);
    if (cached) return cached;
    return deepSearchPage(db, { ...query, sort });
  }
  const where = `WHERE search_text LIKE ${foldedSearch}`;
  const params = [containsPattern(query.search)];
  const { rows: counted } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM audit_log ${where} LIMIT ${EXACT_LIMIT + 1}) t`,
    params,
  );
  const bounded = counted[0]?.n ?? 0;
  const exact = bounded <= EXACT_LIMIT;
  let total = bounded;
  if (!exact) {
    const { rows } = await db.query<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }>(
      `EXPLAIN (FORMAT JSON) SELECT 1 FROM audit_log ${where}`,
      params,
    );
    total = Math.max(rows[0]?.['QUERY PLAN'][0].Plan['Plan Rows'] ?? 0, EXACT_LIMIT + 1);
  }
  const lastPage = Math.max(1, Math.ceil(total / query.perPage));
  const page = exact ? Math.min(query.page, lastPage) : query.page;
  const order = orderBy[sort.column][sort.direction];
  if (!exact) {
    // Many matches: the planner walks the sort's index and filters, assuming matches are spread evenly
    // through the sort. When they are not (a search matching one type's rows, sorted by type), that
    // walk passes hundreds of thousands of rows. So walk a bounded stretch only, and past it sort the
    // matches themselves (kept for the next pages, when a cache is given).
    // In the order of the sort's own index, so the walk reads that index.
    const walk = indexOrder(pageIndexes[sort.column][sort.direction]);
    const walked = await db.query<AuditRow>(
      `SELECT ${selectColumns} FROM audit_log
       WHERE position IN (SELECT position FROM (SELECT ${walkColumns} FROM audit_log ORDER BY ${walk}
                                                LIMIT ${WALK_ROWS}) w
                          WHERE w.search_text LIKE ${foldedSearch} ORDER BY ${walk} LIMIT ${query.perPage})
       ORDER BY ${order}`,
      params,
    );
    if (walked.rows.length === query.perPage) {
      return { rows: walked.rows, count: { value: total, exact }, page, lastPage: Math.max(lastPage, 2) };
    }
    const cached = await fromMatches(1);
    if (cached) return cached;
  }
  // Only the matching keys are sorted; the page's rows are read afterwards.
  const { rows } = await db.query<AuditRow>(
    `SELECT ${selectColumns} FROM audit_log
     WHERE position IN (SELECT position FROM audit_log ${where} ORDER BY ${order}
                        LIMIT ${query.perPage} OFFSET ${(page - 1) * query.perPage})
     ORDER BY ${order}`,
    params,
  );
  return {
    rows,
    count: { value: total, exact },
    page,
    lastPage: exact ? lastPage : Math.max(lastPage, page + (rows.length === query.perPage ? 1 : 0)),
  };
}

/** Rows of a sort's order read before a search's first page gives up on walking it. */
const WALK_ROWS = 20_000;
/** A page index's key as an ORDER BY (the same order as `orderBy`, spelled as its index is). */
const indexOrder = (sort: PageIndexSort) =>
  [...sort.keys, sort.id].map((key) => `${key} ${sort.backwards ? 'DESC' : 'ASC'}`).join(', ');
/** What a walk reads of each row: the sort keys and the search text. */
const walkColumns = 'position, at, actor_name, type, competitor_name, search_text';

/** Each sort's key over the matching set (`m`), for searches past page 1; ordered as `orderBy`. */
const matchKeys: Record<AuditSortColumn, { key: string; nulls: string }> = {
  time: { key: 'at', nulls: '' },
  actor: { key: 'lower(actor_name)', nulls: '' },
  type: { key: 'type', nulls: '' },
  competitor: { key: 'lower(competitor_name)', nulls: 'NULLS LAST' },
};

/**
 * A search's page past the first: the matching set is read once, counted exactly, and only its keys are
 * sorted (see listCompetitors); a page past the end becomes the last page.
 */
async function deepSearchPage(
  db: Queryable,
  query: {
    search: string;
    sort: { column: AuditSortColumn; direction: 'asc' | 'desc' };
    page: number;
    perPage: number;
  },
) {
  const { key, nulls } = matchKeys[query.sort.column];
  const direction = query.sort.direction === 'asc' ? 'ASC' : 'DESC';
  const { rows } = await db.query<AuditRow & { m_total: number; m_page: number }>(
    `WITH m AS MATERIALIZED (SELECT position, ${key} AS k FROM audit_log WHERE search_text LIKE ${foldedSearch}),
       c AS (SELECT count(*)::int AS n FROM m),
       p AS (SELECT n, least($2::bigint, greatest(1, ceil(n / $3::numeric)))::int AS page FROM c),
       ids AS (SELECT position FROM m ORDER BY k ${direction} ${nulls}, position ${direction}
               OFFSET (SELECT (page - 1) * $3::int FROM p) LIMIT $3::int)
     SELECT ${selectColumns}, (SELECT n FROM p) AS m_total, (SELECT page FROM p) AS m_page
     FROM audit_log WHERE position IN (SELECT position FROM ids)
     ORDER BY ${orderBy[query.sort.column][query.sort.direction]}`,
    [containsPattern(query.search), query.page, query.perPage],
  );
  const total = rows[0]?.m_total ?? 0;
  return {
    rows: rows.map(({ m_total: _t, m_page: _p, ...row }) => row),
    count: { value: total, exact: true },
    page: rows[0]?.m_page ?? 1,
    lastPage: Math.max(1, Math.ceil(total / query.perPage)),
  };
}

/** The last name a competitor had, even after it was deleted. */
export async function lastKnownName(db: Queryable, competitorId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT competitor_name AS name FROM audit_log WHERE competitor_id = $1 AND competitor_name IS NOT NULL
     ORDER BY position DESC LIMIT 1`,
    [competitorId],
  );
  return rows[0]?.name;
}
