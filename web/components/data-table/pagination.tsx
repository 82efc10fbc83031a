import { toQueryString, type TableState } from './table-state.ts';
import { formatNumber } from '../format.ts';

/** Page numbers to show: first, last, and a window around the current page, with gaps as `null`. */
export function pageWindow(page: number, lastPage: number, radius = 2): (number | null)[] {
  const pages = new Set<number>([1, lastPage]);
  for (let p = Math.max(1, page - radius); p <= Math.min(lastPage, page + radius); p++) pages.add(p);
  const sorted = [...pages].filter((p) => p >= 1 && p <= lastPage).sort((a, b) => a - b);
  const result: (number | null)[] = [];
  for (const [i, p] of sorted.entries()) {
    const previous = sorted[i - 1];
    if (previous !== undefined && p - previous > 1) result.push(null);
    result.push(p);
  }
  return result;
}

/** Pagination links (docs/behaviour.md §2): real hrefs; the table controller turns a click into a refresh. */
export function Pagination(props: {
  path: string;
  state: TableState;
  lastPage: number;
  lastPageExact: boolean;
}) {
  const { path, state, lastPage } = props;
  if (lastPage <= 1) return null;
  const href = (page: number) => `${path}?${toQueryString({ ...state, page })}`;
  const link = (page: number, label: string, rel?: string) => (
    <a
      href={href(page)}
      data-page={page}
      rel={rel}
      aria-label={`${label === String(page) ? 'Page ' : ''}${label}`}
    >
      {label}
    </a>
  );
  return (
    <nav className="pagination" aria-label="Pagination">
      <ul>
        <li>
          {state.page > 1 ? (
            link(state.page - 1, 'Previous', 'prev')
          ) : (
            <span aria-disabled="true">Previous</span>
          )}
        </li>
        {pageWindow(state.page, lastPage).map((page, i) => (
          <li key={page ?? `gap-${i}`}>
            {page === null ? (
              <span className="pagination__gap">…</span>
            ) : page === state.page ? (
              <span aria-current="page">{formatNumber(page)}</span>
            ) : (
              link(page, String(page))
            )}
          </li>
        ))}
        <li>
          {state.page < lastPage ? (
            link(state.page + 1, 'Next', 'next')
          ) : (
            <span aria-disabled="true">Next</span>
          )}
        </li>
      </ul>
    </nav>
  );
}
