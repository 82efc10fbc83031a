/**
 * The data table's state (docs/behaviour.md §1): search, sort, page, perPage, and the sort
 * toggle (§3).
 * Pure and shared by the server (parsing a request) and the browser (building the next request).
 */
import { cutAtCharacter } from '#events/cut-at-character.ts';

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

/** A positive number as written in a URL: digits, maybe a fraction, maybe an exponent (`1e30`). */
const POSITIVE_NUMBER = /^\+?(\d+\.?\d*|\.\d+)(e\+?\d+)?$/i;

/**
 * Reads the four parameters leniently: invalid values never produce an error page. An unknown sort
 * column is ignored; a bad page becomes 1 (too-large pages, even ones beyond the safe integers, are
 * clamped once the count is known); a perPage outside the offered sizes becomes 15.
 */
export function parseTableState(query: Record<string, QueryValue>, sortable: readonly string[]): TableState {
  // Composed (NFC) as stored text is (events/text.ts), so an accent typed either way finds the other.
  const search = cutAtCharacter(single(query.search).normalize('NFC').trim(), SEARCH_MAX_LENGTH);
  const sortMatch = /^([a-z_]+):(asc|desc)$/.exec(single(query.sort));
  const sort = sortMatch && sortable.includes(sortMatch[1] ?? '') ? single(query.sort) : '';
  const rawPage = single(query.page).trim();
  // Only decimal notation: `Number` would also read hex (0x10) and binary.
  const pageNumber = POSITIVE_NUMBER.test(rawPage) ? Number(rawPage) : Number.NaN;
  // A number too big to hold exactly (999…9, 1e30, 1e400) is still a too-large page (clamped to the
  // last one), not a bad one.
  const page =
    Number.isSafeInteger(pageNumber) && pageNumber >= 1
      ? pageNumber
      : pageNumber > Number.MAX_SAFE_INTEGER
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

/**
 * The order the rows are in: the state's sort, or without one the table's default order (`column:asc|desc`,
 * the one its query falls back on). Headers show this one, so the default column reads as sorted.
 */
export const shownSort = (state: Pick<TableState, 'sort'>, defaultSort = ''): string =>
  state.sort || defaultSort;

/**
 * The table after choosing `column`'s header: the next sort, from page 1. A new order makes the old page
 * number meaningless (page 7 of names is not where page 7 of ranks was), so a sort change starts over, as a
 * search or page-size change does (docs/behaviour.md §3, our choice). Toggling follows the seed to the
 * letter: from the `sort` chosen, so without one the first choice of any column, the default order's
 * included, is ascending ("Any other case sets ascending").
 */
export function sortedBy(state: TableState, column: string): TableState {
  return { ...state, sort: nextSort(state.sort, column), page: 1 };
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
