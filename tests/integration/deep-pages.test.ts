import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queryable } from '#infra/db/database.ts';
import { listAudit } from '#projections/audit-log/audit-log.queries.ts';
import {
  listCompetitors,
  type CompetitorSortColumn,
} from '#projections/competitor-list/competitor-list.queries.ts';
import { containsPattern, foldedSearch } from '#projections/search-pages.ts';
import { listUsers, userSearchText } from '#projections/user-list/user-list.queries.ts';
import { userListProjection } from '#projections/user-list/user-list.projection.ts';
import { withTransaction } from '#infra/db/database.ts';
import { buildShadowPageIndexes, swapInShadow } from '#projections/rebuild/shadow-tables.ts';
import { createSearchPageCache, type SearchPageCache } from '#projections/search-pages.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';

/**
 * Deep pages (issue 13, item 1): for every sort column and direction of the three data tables, the
 * first, a middle, the last and a past-the-end page return exactly the rows `ORDER BY … OFFSET` returns
 * (ties broken by the id), with and without a search, before and after rows are added, deleted and
 * re-keyed between requests. Enough rows that every sort's page index has several buckets (1,000 rows
 * each) and must split and drop them as rows change.
 *
 * The expected pages come from the reference SQL written here, independently of the query code.
 */

const PER_PAGE = 15;
const ROWS = 3_100;

/** The reference orders, as the product defines them (ascending; descending reverses each part). */
const competitorOrder: Record<string, (d: 'ASC' | 'DESC') => string> = {
  rank: (d) => `rank ${d}, id ${d}`,
  name: (d) => `lower(name) ${d}, id ${d}`,
  segment: (d) => `segment_name ${d}, id ${d}`,
  threat: (d) => `threat_level ${d}, id ${d}`,
  updated: (d) => `updated_at ${d}, id ${d}`,
};
const auditOrder: Record<string, (d: 'ASC' | 'DESC') => string> = {
  time: (d) => `at ${d}, position ${d}`,
  actor: (d) => `lower(actor_name) ${d}, position ${d}`,
  type: (d) => `type ${d}, position ${d}`,
  competitor: (d) => `lower(competitor_name) ${d} NULLS LAST, position ${d}`,
};
const userOrder: Record<string, (d: 'ASC' | 'DESC') => string> = {
  name: (d) => `lower(display_name) ${d}, id ${d}`,
  email: (d) => `lower(email) ${d}, id ${d}`,
  role: (d) => `role ${d}, id ${d}`,
  created: (d) => `created_at ${d}, id ${d}`,
};

/** One data table: the reference SQL's view of it, and its query code answering a page's ids. */
interface TableUnderTest {
  name: string;
  table: string;
  idColumn: string;
  searchWhere: string;
  orders: Record<string, (d: 'ASC' | 'DESC') => string>;
  list: (
    db: Queryable,
    search: string,
    sort: { column: string; direction: 'asc' | 'desc' },
    page: number,
    pages?: SearchPageCache,
  ) => Promise<{ page: number; ids: string[] }>;
}

const pageIds = <R>(result: { page: number; rows: R[] }, id: (row: R) => string) => ({
  page: result.page,
  ids: result.rows.map(id),
});

const competitorTable: TableUnderTest = {
  name: 'competitors',
  table: 'competitor_list',
  idColumn: 'id',
  searchWhere: `WHERE search_text LIKE ${foldedSearch}`,
  orders: competitorOrder,
  list: async (db, search, { column, direction }, page, pages) =>
    pageIds(
      await listCompetitors(
        db,
        { search, sort: { column: column as CompetitorSortColumn, direction }, page, perPage: PER_PAGE },
        pages,
      ),
      (r) => r.id,
    ),
};
const auditTable: TableUnderTest = {
  name: 'audit',
  table: 'audit_log',
  idColumn: 'position',
  searchWhere: `WHERE search_text LIKE ${foldedSearch}`,
  orders: auditOrder,
  list: async (db, search, { column, direction }, page, pages) =>
    pageIds(
      await listAudit(
        db,
        { search, sort: { column: column as 'time', direction }, page, perPage: PER_PAGE },
        pages,
      ),
      (r) => String(r.position),
    ),
};
const userTable: TableUnderTest = {
  name: 'users',
  table: 'user_list',
  idColumn: 'id',
  searchWhere: `WHERE ${userSearchText} LIKE ${foldedSearch}`,
  orders: userOrder,
  list: async (db, search, { column, direction }, page, pages) =>
    pageIds(
      await listUsers(
        db,
        { search, sort: { column: column as 'name', direction }, page, perPage: PER_PAGE },
        pages,
      ),
      (r) => r.id,
    ),
};

/** Page numbers to check for a set of `n` rows: first, middle, last, and past the end. */
const pagesFor = (n: number) => {
  const last = Math.max(1, Math.ceil(n / PER_PAGE));
  return [1, Math.ceil(last / 2), last, last + 7, Number.MAX_SAFE_INTEGER];
};

async function expectedPage(
  db: Queryable,
  table: string,
  idColumn: string,
  order: string,
  where: string,
  params: unknown[],
  page: number,
): Promise<{ ids: string[]; page: number }> {
  const { rows: counted } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${table} ${where}`,
    params,
  );
  const last = Math.max(1, Math.ceil((counted[0]?.n ?? 0) / PER_PAGE));
  const shown = Math.min(page, last);
  const { rows } = await db.query<{ id: string }>(
    `SELECT ${idColumn}::text AS id FROM ${table} ${where} ORDER BY ${order} LIMIT ${PER_PAGE} OFFSET ${(shown - 1) * PER_PAGE}`,
    params,
  );
  return { ids: rows.map((r) => r.id), page: shown };
}

/**
 * Rows with many ties in every sort key (few distinct names, segments, times), some names differing only in
 * case, many beyond ASCII (accents, Greek with both sigmas, ß, dotted İ, emoji): their keys sort by the
 * database's rules, and the page indexes must agree with its ORDER BY exactly (decision 0024).
 */
async function seed(db: Queryable, from: number, count: number): Promise<void> {
  await db.query(
    `INSERT INTO competitor_list (id, name, segment_id, segment_name, threat, rank, strengths, version, created_at, updated_at)
     SELECT gen_random_uuid(), (ARRAY['Rival ', 'rival ', 'Émile ', 'émile ', 'ΟΔΟΣ ', 'οδος ', 'Straße ', '😀 '])[1 + i % 8] || (i % 23), 's' || (i % 4),
            'Segment ' || (i % 4), (ARRAY['low', 'medium', 'high'])[1 + i % 3],
            (SELECT coalesce(max(rank), 0) FROM competitor_list) + i - $1 + 1,
            CASE WHEN i % 9 = 0 THEN 'has a forge' WHEN i % 200 = 0 THEN 'rare anvil' ELSE '' END, 1,
            timestamptz '2026-01-01' + (i % 50) * interval '1 minute',
            timestamptz '2026-01-01' + (i % 61) * interval '1 minute'
     FROM generate_series($1::int, $1::int + $2::int - 1) AS i`,
    [from, count],
  );
  await db.query(
    `INSERT INTO audit_log (position, at, actor_id, actor_name, type, stream, competitor_id, competitor_name, summary)
     SELECT i, timestamptz '2026-01-01' + (i % 70) * interval '1 second', 'a' || (i % 5),
            (ARRAY['Ada ', 'ada ', 'Ågot ', 'İlker '])[1 + i % 4] || (i % 5),
            (ARRAY['CompetitorAdded', 'CompetitorNoteUpdated', 'UserAdded'])[1 + i % 3], 'competitor-' || i,
            CASE WHEN i % 3 = 2 THEN NULL ELSE gen_random_uuid() END,
            CASE WHEN i % 3 = 2 THEN NULL ELSE 'Rival ' || (i % 17) END,
            CASE WHEN i % 11 = 0 THEN 'changed the forge note' ELSE 'did something' END
     FROM generate_series($1::int, $1::int + $2::int - 1) AS i`,
    [from, count],
  );
  await db.query(
    `INSERT INTO user_list (id, email, display_name, role, created_at, updated_at)
     SELECT gen_random_uuid(), 'user' || i || '@example.com', (ARRAY['Kim ', 'kim ', 'Zoë ', 'Ζωή '])[1 + i % 4] || (i % 13),
            (ARRAY['admin', 'editor', 'viewer'])[1 + i % 3], timestamptz '2026-01-01' + (i % 40) * interval '1 hour', now()
     FROM generate_series($1::int, $1::int + $2::int - 1) AS i`,
    [from, count],
  );
}

/** Changes between requests: rows added, deleted, and moved in every sort. */
async function churn(db: Queryable): Promise<void> {
  await seed(db, ROWS + 1, 400);
  await db.query(`DELETE FROM competitor_list WHERE rank % 5 = 0`);
  // Ranks stay dense (1..n), as the projection keeps them.
  await db.query(
    `UPDATE competitor_list c SET rank = r.n FROM (SELECT id, row_number() OVER (ORDER BY rank) AS n FROM competitor_list) r
     WHERE c.id = r.id AND c.rank <> r.n`,
  );
  await db.query(
    `UPDATE competitor_list SET name = 'Moved ' || name, segment_name = 'Segment Z', threat = 'high',
       updated_at = updated_at + interval '1 day' WHERE rank % 7 = 1`,
  );
  await db.query(`DELETE FROM audit_log WHERE position % 6 = 0`);
  await db.query(
    `UPDATE audit_log SET competitor_name = CASE WHEN competitor_name IS NULL THEN 'Late Name' ELSE NULL END,
       actor_name = 'Zed', at = at + interval '1 hour', type = 'Moved' WHERE position % 8 = 3`,
  );
  await db.query(`DELETE FROM user_list WHERE created_at < timestamptz '2026-01-01' + interval '3 hours'`);
  await db.query(
    `UPDATE user_list SET display_name = 'Aaron', role = 'admin', created_at = created_at - interval '1 year'
     WHERE email LIKE 'user1%'`,
  );
}

describe.each(databaseBackends)('deep pages equal ORDER BY … OFFSET (%s)', (backend) => {
  let db: TestDatabase;
  // One per database, as each app has its own.
  const searchPages = createSearchPageCache();
  // Keeping one page on each side of the page asked for: most deep pages then read their matches, from
  // either end of the order, and most kept stretches lie elsewhere.
  const narrowPages = createSearchPageCache({ windowPages: 1 });

  beforeAll(async () => {
    db = await createTestDatabase(backend);
    await seed(db.pool, 1, ROWS);
  }, 120_000);
  afterAll(async () => {
    await db?.drop();
  });

  /** Every sort, both ways, first/middle/last/past-the-end, of one table with one search. */
  const check = async (table: TableUnderTest, search: string) => {
    const where = search ? table.searchWhere : '';
    const params = search ? [containsPattern(search)] : [];
    const { rows } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${table.table} ${where}`,
      params,
    );
    const matching = rows[0]?.n ?? 0;
    for (const [column, order] of Object.entries(table.orders)) {
      for (const direction of ['asc', 'desc'] as const) {
        for (const page of pagesFor(matching)) {
          const label = `${table.name} "${search}" ${column}:${direction} page ${page}`;
          const expected = await expectedPage(
            db.pool,
            table.table,
            table.idColumn,
            order(direction === 'asc' ? 'ASC' : 'DESC'),
            where,
            params,
            page,
          );
          const result = await table.list(db.pool, search, { column, direction }, page);
          expect(result.page, label).toBe(expected.page);
          expect(result.ids, label).toEqual(expected.ids);
          // The same page through the search's cached matches (kept across checks: a check after
          // rows changed must not be served what was cached before).
          const cached = await table.list(db.pool, search, { column, direction }, page, searchPages);
          expect(cached, `${label} (cached matches)`).toEqual(expected);
          const narrow = await table.list(db.pool, search, { column, direction }, page, narrowPages);
          expect(narrow, `${label} (matches kept a page either side)`).toEqual(expected);
        }
      }
    }
  };
  const checkCompetitors = (search: string) => check(competitorTable, search);
  const checkAudit = (search: string) => check(auditTable, search);
  const checkUsers = (search: string) => check(userTable, search);

  it('competitors: every sort, both ways, first/middle/last/past-the-end, with and without a search', async () => {
    for (const search of ['', 'forge', 'anvil', 'rival 1', 'ÉMILE 1', 'οδοσ']) await checkCompetitors(search);
  }, 120_000);

  it('audit log: the same', async () => {
    for (const search of ['', 'forge', 'ada 3', 'did', 'İLKER']) await checkAudit(search);
  }, 120_000);

  it('users: the same', async () => {
    for (const search of ['', 'kim 1', 'editor', 'ΖΩΉ']) await checkUsers(search);
  }, 120_000);

  it("a search's next pages are read by id from its cached matches until the table changes", async () => {
    const statements: string[] = [];
    const counting = {
      query: (sql: string, params?: unknown[]) => {
        statements.push(sql);
        return db.pool.query(sql, params);
      },
    } as Queryable;
    const pages = createSearchPageCache();
    const sort = { column: 'name', direction: 'desc' } as const;
    const first = await competitorTable.list(counting, 'forge', sort, 2, pages);
    expect(statements.some((s) => s.includes('string_agg'))).toBe(true);
    statements.length = 0;
    const next = await competitorTable.list(counting, 'forge', sort, 3, pages);
    expect(statements).toHaveLength(1);
    expect(statements[0]).not.toContain('string_agg');
    expect(next.ids).not.toEqual(first.ids);
    // A write to the table, from anyone, moves its version: the matches are read again.
    await db.pool.query(`UPDATE competitor_list SET strengths = 'a forge too' WHERE strengths = ''`);
    statements.length = 0;
    const after = await competitorTable.list(counting, 'forge', sort, 3, pages);
    expect(statements.some((s) => s.includes('string_agg'))).toBe(true);
    const expected = await expectedPage(
      db.pool,
      'competitor_list',
      'id',
      competitorOrder.name?.('DESC') ?? '',
      competitorTable.searchWhere,
      [containsPattern('forge')],
      3,
    );
    expect(after).toEqual(expected);
    await db.pool.query(`UPDATE competitor_list SET strengths = '' WHERE strengths = 'a forge too'`);
  });

  it('an audit search whose matches all lie past a long stretch of the sort finds its first page', async () => {
    // 21,000 rows first in type order, none matching; then 1,100 matches (more than are counted exactly).
    await db.pool.query(
      `INSERT INTO audit_log (position, at, actor_id, actor_name, type, stream, competitor_id, competitor_name, summary)
       SELECT 1000000 + i, now(), 'a', 'Ada', CASE WHEN i <= 21000 THEN 'AAA' ELSE 'ZZZ' END, 'bulk', NULL, NULL,
              CASE WHEN i <= 21000 THEN 'nothing here' ELSE 'a needle ' || i END
       FROM generate_series(1, 22100) AS i`,
    );
    try {
      const pages = createSearchPageCache();
      for (const direction of ['asc', 'desc'] as const) {
        const expected = await expectedPage(
          db.pool,
          'audit_log',
          'position',
          auditOrder.type?.(direction === 'asc' ? 'ASC' : 'DESC') ?? '',
          auditTable.searchWhere,
          [containsPattern('needle')],
          1,
        );
        expect(await auditTable.list(db.pool, 'needle', { column: 'type', direction }, 1)).toEqual(expected);
        expect(await auditTable.list(db.pool, 'needle', { column: 'type', direction }, 1, pages)).toEqual(
          expected,
        );
      }
      // Past the walk, the matches were read and kept: the count is exact and page 2 is read by id.
      const first = await listAudit(
        db.pool,
        { search: 'needle', sort: { column: 'type', direction: 'asc' }, page: 1, perPage: PER_PAGE },
        pages,
      );
      expect(first.count).toEqual({ value: 1100, exact: true });
    } finally {
      await db.pool.query('DELETE FROM audit_log WHERE position > 1000000');
    }
  }, 120_000);

  it('after rows are added, deleted and re-keyed between requests, pages still equal the reference', async () => {
    await churn(db.pool);
    // The page indexes' counts still add up to the tables' rows.
    for (const [table, bucket] of [
      ['competitor_list', 'competitor_list_pages_name'],
      ['competitor_list', 'competitor_list_pages_updated'],
      ['audit_log', 'audit_log_pages_competitor_desc'],
      ['user_list', 'user_list_pages_created'],
    ] as const) {
      const { rows } = await db.pool.query<{ rows: number; counted: number }>(
        `SELECT (SELECT count(*) FROM ${table})::int AS rows, (SELECT sum(pk_n) FROM ${bucket})::int AS counted`,
      );
      expect(rows[0]?.counted, bucket).toBe(rows[0]?.rows);
    }
    for (const search of ['', 'forge']) {
      await checkCompetitors(search);
      await checkAudit(search);
      await checkUsers(search);
    }
  }, 240_000);

  it('a replay swap hands the page index over to the rebuilt table', async () => {
    await db.pool.query('CREATE TABLE user_list__shadow (LIKE user_list INCLUDING ALL)');
    await db.pool.query(`INSERT INTO user_list__shadow SELECT * FROM user_list WHERE role <> 'viewer'`);
    await withTransaction(db.pool, (client) => swapInShadow(client, userListProjection));
    await checkUsers('');
    // The new table has the triggers: later changes keep the counts.
    await db.pool.query(
      `INSERT INTO user_list (id, email, display_name, role, created_at, updated_at)
       SELECT gen_random_uuid(), 'late' || i || '@example.com', 'Late ' || i, 'viewer', now(), now()
       FROM generate_series(1, 1500) AS i`,
    );
    await db.pool.query(`DELETE FROM user_list WHERE email LIKE 'late1%'`);
    await checkUsers('');
  }, 120_000);

  it('buckets built for a shadow before the swap stay exact through later changes and move with it', async () => {
    await db.pool.query('CREATE TABLE user_list__shadow (LIKE user_list INCLUDING ALL)');
    await db.pool.query(`INSERT INTO user_list__shadow SELECT * FROM user_list WHERE role <> 'editor'`);
    await buildShadowPageIndexes(db.pool, 'user_list');
    // A catch-up after the buckets were built: the shadow's own triggers count it.
    await db.pool.query(
      `INSERT INTO user_list__shadow (id, email, display_name, role, created_at, updated_at)
       SELECT gen_random_uuid(), 'caught' || i || '@example.com', 'Caught ' || i, 'viewer', now(), now()
       FROM generate_series(1, 1200) AS i`,
    );
    await db.pool.query(`DELETE FROM user_list__shadow WHERE email LIKE 'caught1%'`);
    const live = await db.pool.query<{ n: number }>(
      'SELECT sum(pk_n)::int AS n FROM user_list_pages_created',
    );
    await withTransaction(db.pool, (client) => swapInShadow(client, userListProjection));
    const { rows } = await db.pool.query<{ rows: number; counted: number; shadows: number }>(
      `SELECT (SELECT count(*) FROM user_list)::int AS rows,
              (SELECT sum(pk_n) FROM user_list_pages_created)::int AS counted,
              (SELECT count(*) FROM page_index_sorts WHERE table_name LIKE '%\\_\\_shadow')::int AS shadows`,
    );
    expect(rows[0]?.counted).toBe(rows[0]?.rows);
    expect(rows[0]?.counted).not.toBe(live.rows[0]?.n);
    expect(rows[0]?.shadows).toBe(0);
    await checkUsers('');
    await db.pool.query(`DELETE FROM user_list WHERE email LIKE 'caught2%'`);
    await checkUsers('');
  }, 120_000);

  it('an emptied table answers an empty first page, and refills', async () => {
    await db.pool.query('TRUNCATE user_list');
    const empty = await listUsers(db.pool, { search: '', sort: undefined, page: 3, perPage: PER_PAGE });
    expect(empty).toEqual({ rows: [], total: 0, page: 1, lastPage: 1 });
    await seed(db.pool, 10_000, 40);
    await checkUsers('');
  }, 120_000);
});
