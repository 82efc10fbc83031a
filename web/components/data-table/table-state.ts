/**
 * The data table's state (docs/behaviour.md §1): search, sort, page, perPage, and the sort
 * toggle (§3).
 * Pure and shared by the server (parsing a request) and the browser (building the next request).
 */
export interface TableState {
  search: string;
  /** `column:asc`, `column:desc`, or empty for the table's natural order. */
  sort: string;
  page: number;
  perPage: number;
}

export const DEFAULT_PER_PAGE = 15;
export const perPageOptions = [10, 15, 25, 50, 100] as const;
export const SEARCH_MAX_LENGTH = 200;

export const initialTableState: TableState = { search: '', sort: '', page: 1, perPage: DEFAULT_PER_PAGE };

type QueryValue = string | string[] | null | undefined;
const single = (value: QueryValue): string => (Array.isArray(value) ? (value.at(-1) ?? '') : (value ?? ''));

/**
 * Reads the four parameters leniently: invalid values never produce an error page. An unknown sort
 * column is ignored; a bad page becomes 1 (too-large pages, even ones beyond the safe integers, are
 * clamped once the count is known); a perPage outside the offered sizes becomes 15.
 */
export function parseTableState(query: Record<string, QueryValue>, sortable: readonly string[]): TableState {
  const search = single(query.search).trim().slice(0, SEARCH_MAX_LENGTH);
  const sortMatch = /^([a-z_]+):(asc|desc)$/.exec(single(query.sort));
  const sort = sortMatch && sortable.includes(sortMatch[1] ?? '') ? single(query.sort) : '';
  const rawPage = single(query.page).trim();
  const pageNumber = Number(rawPage);
  // A whole number too big to hold exactly is still a too-large page (clamped to the last one), not a bad one.
  const page =
    Number.isSafeInteger(pageNumber) && pageNumber >= 1
      ? pageNumber
      : /^\+?\d+$/.test(rawPage) && pageNumber > Number.MAX_SAFE_INTEGER
        ? Number.MAX_SAFE_INTEGER
        : 1;
  const perPageNumber = Number(single(query.perPage));
  const perPage = (perPageOptions as readonly number[]).includes(perPageNumber)
    ? perPageNumber
    : DEFAULT_PER_PAGE;
  return { search, sort, page, perPage };
}

/** docs/behaviour.md §3: same column while ascending → descending; any other case → ascending. */
export function nextSort(current: string, column: string): string {
  return current === `${column}:asc` ? `${column}:desc` : `${column}:asc`;
}

export function sortOf(
  state: Pick<TableState, 'sort'>,
): { column: string; direction: 'asc' | 'desc' } | undefined {
  const [column, direction] = state.sort.split(':');
  if (!column || (direction !== 'asc' && direction !== 'desc')) return undefined;
  return { column, direction };
}

/** The query string for a state; it always carries all four parameters. */
export function toQueryString(state: TableState): string {
  return new URLSearchParams({
    search: state.search,
    sort: state.sort,
    page: String(state.page),
    perPage: String(state.perPage),
  }).toString();
}
