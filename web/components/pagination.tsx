import { formatNumber } from './format.ts';

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

/**
 * Pagination links (docs/behaviour.md §2): real hrefs, so they work without JavaScript; in a data table
 * the table controller turns a click into a refresh. `href` says where each page is.
 */
export function Pagination(props: { page: number; lastPage: number; href: (page: number) => string }) {
  const { page: current, lastPage, href } = props;
  if (lastPage <= 1) return null;
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
          {current > 1 ? link(current - 1, 'Previous', 'prev') : <span aria-disabled="true">Previous</span>}
        </li>
        {pageWindow(current, lastPage).map((page, i) => (
          <li key={page ?? `gap-${i}`}>
            {page === null ? (
              <span className="pagination__gap">…</span>
            ) : page === current ? (
              <span aria-current="page" tabIndex={-1}>
                {formatNumber(page)}
              </span>
            ) : (
              link(page, String(page))
            )}
          </li>
        ))}
        <li>
          {current < lastPage ? link(current + 1, 'Next', 'next') : <span aria-disabled="true">Next</span>}
        </li>
      </ul>
    </nav>
  );
}
