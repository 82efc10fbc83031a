import type { Role } from '#events/user/fields.ts';
import type { Queryable } from '#infra/db/database.ts';
import { bothWays, indexedPage, type PageIndexSort } from '../page-index.ts';
import {
  cachedSearchPage,
  containsPattern,
  foldedSearch,
  type SearchPageCache,
  type SearchTable,
} from '../search-pages.ts';

export interface UserRow {
  id: string;
  email: string;
  displayName: string;
  role: Role;
  disabled: boolean;
  createdAt: Date;
}

const columns = 'id, email, display_name AS "displayName", role, disabled, created_at AS "createdAt"';

/**
 * The user with this email, in any case. Emails are ASCII, stored in lower case (events/user/fields.ts),
 * so only ASCII letters are folded, here. The databases' lower() also folds some other letters into ASCII
 * ones (the dotted capital İ, U+0130, to i, on both backends here, and what it folds depends on the
 * database's locale), so 'admİn@…', an address nobody has, signed in as admin@…. (Sign-in's text is NFC
 * already: a Kelvin sign, U+212A, is the letter K, canonically the same.)
 */
export async function findUserByEmail(db: Queryable, email: string): Promise<UserRow | undefined> {
  const folded = email.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
  const { rows } = await db.query<UserRow>(`SELECT ${columns} FROM user_list WHERE lower(email) = $1`, [
    folded,
  ]);
  return rows[0];
}

export async function findUser(db: Queryable, id: string): Promise<UserRow | undefined> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
  const { rows } = await db.query<UserRow>(`SELECT ${columns} FROM user_list WHERE id = $1`, [id]);
  return rows[0];
}

export async function countUsers(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM user_list');
  return rows[0]?.n ?? 0;
}

export const userSortColumns = ['name', 'email', 'role', 'created'] as const;
export type UserSortColumn = (typeof userSortColumns)[number];
/** The order without a `sort` parameter: by name, A first. The table's header shows it as its sort. */
export const userDefaultSort = { column: 'name', direction: 'asc' } as const;
const orderBy: Record<UserSortColumn, string> = {
  name: 'lower(display_name)',
  email: 'lower(email)',
  role: 'role',
  created: 'created_at',
};

/** Each sort's page index (infra/migrations/015_page_index.sql), keyed as `orderBy`. */
const pageIndexes: Record<UserSortColumn, { asc: PageIndexSort; desc: PageIndexSort }> = {
  name: bothWays('user_list', 'user_list_pages_name', ['lower(display_name)'], 'id'),
  email: bothWays('user_list', 'user_list_pages_email', ['lower(email)'], 'id'),
  role: bothWays('user_list', 'user_list_pages_role', ['role'], 'id'),
  created: bothWays('user_list', 'user_list_pages_created', ['created_at'], 'id'),
};

/**
 * The users' searched text, folded by search_fold as the competitor list's and the audit log's stored
 * search text is. Exactly the expression of the trigram index user_list_search
 * (infra/migrations/030_search_text_folding.sql), or the planner cannot use it.
 */
export const userSearchText = `search_fold(display_name || ' ' || email || ' ' || role)`;
const searchCondition = `${userSearchText} LIKE ${foldedSearch}`;
const searchTable: SearchTable = {
  table: 'user_list',
  id: 'id',
  idType: 'uuid',
  where: searchCondition,
  columns,
};

/**
 * A page of the user list. With `pages`, a search's pages past the first are served from its sorted
 * matches while the list is unchanged.
 */
export async function listUsers(
  db: Queryable,
  query: {
    search: string;
    sort?: { column: UserSortColumn; direction: 'asc' | 'desc' };
    page: number;
    perPage: number;
  },
  pages?: SearchPageCache,
): Promise<{ rows: UserRow[]; total: number; page: number; lastPage: number }> {
  const sort = query.sort ?? userDefaultSort;
  if (!query.search) {
    return indexedPage<UserRow>(db, pageIndexes[sort.column][sort.direction], columns, query);
  }
  const direction = sort.direction === 'desc' ? 'DESC' : 'ASC';
  const order = `${orderBy[sort.column]} ${direction}, id ${direction}`;
  const pattern = containsPattern(query.search);
  if (query.page > 1 && pages) {
    const cached = await cachedSearchPage<UserRow>(
      db,
      pages,
      searchTable,
      order,
      pattern,
      query.page,
      query.perPage,
    );
    if (cached) return cached;
  }
  const where = `WHERE ${searchCondition}`;
  const params = [pattern];
  const { rows: counted } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM user_list ${where}`,
    params,
  );
  const total = counted[0]?.n ?? 0;
  const lastPage = Math.max(1, Math.ceil(total / query.perPage));
  const page = Math.min(query.page, lastPage);
  const { rows } = await db.query<UserRow>(
    `SELECT ${columns} FROM user_list ${where}
     ORDER BY ${order}
     LIMIT ${query.perPage} OFFSET ${(page - 1) * query.perPage}`,
    params,
  );
  return { rows, total, page, lastPage };
}
