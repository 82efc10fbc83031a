import { shownSort, sortedBy, sortOf, type TableState } from './table-state.ts';

/**
 * A sortable column header: a real button in a tiny GET form, so it is keyboard reachable and works
 * without JavaScript; the table controller intercepts the submit and refreshes in place instead.
 */
export function SortHeader(props: {
  path: string;
  state: TableState;
  column: string;
  label: string;
  className?: string;
  /** The table's order without a `sort` (`column:asc|desc`): its column reads as sorted that way. */
  defaultSort: string;
}) {
  const { path, state, column, label, defaultSort } = props;
  const sort = sortOf({ sort: shownSort(state, defaultSort) });
  const active = sort?.column === column ? sort.direction : undefined;
  const ariaSort = active === 'asc' ? 'ascending' : active === 'desc' ? 'descending' : 'none';
  const next = sortedBy(state, column);
  return (
    <th scope="col" aria-sort={ariaSort} className={props.className}>
      <form method="get" action={path} data-sort-form data-sort={column}>
        <input type="hidden" name="search" value={next.search} />
        <input type="hidden" name="sort" value={next.sort} />
        <input type="hidden" name="page" value={next.page} />
        <input type="hidden" name="perPage" value={next.perPage} />
        <button type="submit" className="sort-button" data-sort-button={column}>
          {label}
          <span className="sort-button__icon" aria-hidden="true">
            {active === 'asc' ? '▲' : active === 'desc' ? '▼' : '↕'}
          </span>
        </button>
      </form>
    </th>
  );
}
