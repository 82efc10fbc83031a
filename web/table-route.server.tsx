import type { RouterContext } from '@koa/router';
import type { ReactElement, ReactNode } from 'react';
import { text } from '#events/text.ts';
import { parseInput } from './input.server.ts';
import { isXhr, pageContext, renderHtml } from './render.server.tsx';
import type { PageContext } from './pages/page-context.ts';
import { parseTableState, sortOf, type TableState } from './components/data-table/table-state.ts';

export interface TableQuery<S extends string> {
  search: string;
  sort?: { column: S; direction: 'asc' | 'desc' };
  page: number;
  perPage: number;
}

/** The XHR answer (docs/behaviour.md §2): still an HTML page containing the table region, without the page chrome. */
export function TableFragment({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}

/**
 * One list page with the shared table: reads search/sort/page/perPage leniently, runs the page's query,
 * and answers the full page, or just the table for a refresh (`X-Requested-With: XMLHttpRequest`).
 */
export async function renderTableRoute<S extends string, R extends { page: number }>(
  ctx: RouterContext,
  options: {
    sortColumns: readonly S[];
    query(query: TableQuery<S>): Promise<R>;
    page(props: { page: PageContext; state: TableState } & R): ReactElement;
    table(props: { page: PageContext; state: TableState } & R): ReactElement;
  },
): Promise<void> {
  const parsed = parseTableState(ctx.query, options.sortColumns);
  // Lenient about everything else, but a search Postgres cannot run (NUL) is the user's to fix.
  parseInput(text('Search'), parsed.search);
  const sort = sortOf(parsed);
  const result = await options.query({
    search: parsed.search,
    sort: sort ? { column: sort.column as S, direction: sort.direction } : undefined,
    page: parsed.page,
    perPage: parsed.perPage,
  });
  const props = { ...result, page: pageContext(ctx), state: { ...parsed, page: result.page } };
  renderHtml(ctx, isXhr(ctx) ? <TableFragment>{options.table(props)}</TableFragment> : options.page(props));
}
