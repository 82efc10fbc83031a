import type { ReactElement, ReactNode } from 'react';
import { TableToolbar } from '../../client/islands/table-toolbar.tsx';
import { Island } from '../island.tsx';
import { Pagination } from '../pagination.tsx';
import { SortHeader } from './sort-header.tsx';
import { perPageOptions, sortOf, toQueryString, type TableState } from './table-state.ts';
import { formatNumber } from '../format.ts';

export interface Column<Row> {
  key: string;
  label: string;
  /** The sort key when the column is sortable. */
  sort?: string;
  className?: string;
  cell(row: Row): ReactNode;
}

export interface ResultCount {
  value: number;
  /** False when the count is an estimate (very large results). */
  exact: boolean;
}

export interface DataTableProps<Row> {
  id: string;
  /** The list page's path; refreshes request it again with the four parameters. */
  path: string;
  /** Plural noun for labels: "competitors". */
  noun: string;
  state: TableState;
  columns: Column<Row>[];
  rows: Row[];
  count: ResultCount;
  lastPage: number;
  rowKey(row: Row): string;
  rowLabel?(row: Row): string;
  /**
   * What heard live makes it look again: `rows` — competitor changes that can alter the page shown
   * (web/realtime/affects-table.ts); `audit` — every new line of the audit log, competitor changes or not
   * (web/realtime/audit-feed.server.ts); `never`.
   */
  liveRefresh: 'rows' | 'audit' | 'never';
  /**
   * The order the table's query uses without a `sort` parameter (its projection's default): its header
   * reads as sorted (aria-sort, the arrow). Choosing it sorts ascending, as the seed says of any first choice.
   */
  defaultSort: { column: string; direction: 'asc' | 'desc' };
}

export const formatCount = (count: ResultCount): string =>
  count.exact ? formatNumber(count.value) : `about ${formatNumber(count.value)}`;

/** "1 competitor", "2 competitors", "about 50,000 competitors". */
const countWithNoun = (count: ResultCount, noun: string): string =>
  `${formatCount(count)} ${count.value === 1 && count.exact ? noun.replace(/s$/, '') : noun}`;

/** The sentence the live region announces after a refresh. */
export function tableSummary(
  state: TableState,
  columns: Column<unknown>[],
  count: ResultCount,
  noun: string,
): string {
  const sort = sortOf(state);
  const column = columns.find((c) => c.sort === sort?.column);
  const sorted =
    sort && column
      ? `Sorted by ${column.label.toLowerCase()}, ${sort.direction === 'asc' ? 'ascending' : 'descending'}`
      : 'Default order';
  const results = countWithNoun(count, noun);
  return `${sorted} — ${results}${state.search ? ` matching “${state.search}”` : ''}`;
}

/**
 * The shared data table (docs/behaviour.md §1–§3). The toolbar island sits outside `[data-table-region]`; the
 * region is what a refresh swaps. Every control is also a plain link or form, so the table works by
 * full navigation when JavaScript is off.
 */
export function DataTable<Row>(props: DataTableProps<Row>): ReactElement {
  const { id, path, noun, state, columns, rows, count, lastPage } = props;
  const summary = tableSummary(state, columns, count, noun);
  const defaultSort = `${props.defaultSort.column}:${props.defaultSort.direction}`;
  return (
    <section
      className="data-table"
      id={id}
      data-table
      data-path={path}
      data-state={JSON.stringify(state)}
      data-live-refresh={props.liveRefresh}
    >
      <Island
        name="table-toolbar"
        component={TableToolbar}
        props={{
          tableId: id,
          action: path,
          label: noun,
          search: state.search,
          sort: state.sort,
          perPage: state.perPage,
          perPageOptions,
        }}
      />
      <p className="sr-only" aria-live="polite" data-table-status></p>
      <div className="data-table__loading" data-table-loading hidden>
        Loading…
      </div>
      <div
        className="data-table__region"
        data-table-region
        data-summary={summary}
        data-state={JSON.stringify(state)}
      >
        {rows.length === 0 ? (
          <EmptyState path={path} state={state} noun={noun} />
        ) : (
          <div className="data-table__scroll">
            <table>
              <caption className="sr-only">{summary}</caption>
              <thead>
                <tr>
                  {columns.map((column) =>
                    column.sort ? (
                      <SortHeader
                        key={column.key}
                        path={path}
                        state={state}
                        column={column.sort}
                        label={column.label}
                        className={column.className}
                        defaultSort={defaultSort}
                      />
                    ) : (
                      <th key={column.key} scope="col" className={column.className}>
                        {column.label}
                      </th>
                    ),
                  )}
                </tr>
              </thead>
              <tbody>
                {rows.map((row) => (
                  <tr key={props.rowKey(row)} data-row-id={props.rowKey(row)}>
                    {columns.map((column) => (
                      <td key={column.key} className={column.className} data-label={column.label}>
                        {column.cell(row)}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <footer className="data-table__footer">
          <p className="data-table__count">
            {countWithNoun(count, noun)}
            {rows.length > 0 &&
              ` · page ${formatNumber(state.page)} of ${count.exact ? '' : 'about '}${formatNumber(lastPage)}`}
          </p>
          <Pagination
            page={state.page}
            lastPage={lastPage}
            href={(page) => `${path}?${toQueryString({ ...state, page })}`}
          />
        </footer>
      </div>
    </section>
  );
}

function EmptyState({ path, state, noun }: { path: string; state: TableState; noun: string }) {
  return (
    <div className="data-table__empty">
      {state.search ? (
        <>
          <p>
            No {noun} match “{state.search}”.
          </p>
          <a
            className="button"
            href={`${path}?${toQueryString({ ...state, search: '', page: 1 })}`}
            data-clear-search
          >
            Clear search
          </a>
        </>
      ) : (
        <p>No {noun} yet.</p>
      )}
    </div>
  );
}
