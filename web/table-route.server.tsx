import { createHash } from 'node:crypto';
import type { RouterContext } from '@koa/router';
import type { ReactElement, ReactNode } from 'react';
import { text } from '#events/text.ts';
import type { Queryable } from '#infra/db/database.ts';
import type { SearchReads } from './search-reads.server.ts';
import { ifNoneMatchHits } from './if-none-match.ts';
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

const searchSchema = text('Search');

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
    /** Searched reads take turns and are bounded in time (docs/decisions/0026). */
    reads: SearchReads;
    query(query: TableQuery<S>, db: Queryable): Promise<R>;
    page(props: { page: PageContext; state: TableState } & R): ReactElement;
    table(props: { page: PageContext; state: TableState } & R): ReactElement;
  },
): Promise<void> {
  const parsed = parseTableState(ctx.query, options.sortColumns);
  // Lenient about everything else, but a search Postgres cannot run (NUL) is the user's to fix.
  parseInput(searchSchema, parsed.search);
  const sort = sortOf(parsed);
  const query: TableQuery<S> = {
    search: parsed.search,
    sort: sort ? { column: sort.column as S, direction: sort.direction } : undefined,
    page: parsed.page,
    perPage: parsed.perPage,
  };
  const result = await options.reads.run(query.search !== '', (db) => options.query(query, db));
  const props = { ...result, page: pageContext(ctx), state: { ...parsed, page: result.page } };
  if (!isXhr(ctx)) return renderHtml(ctx, options.page(props));
  // A refresh that would render what the browser already has answers 304 without rendering (live
  // updates make many tabs ask again; most get the same rows). The tag covers everything the fragment
  // is made of: the rows, the state, who asks, their form token and the time zone its times are in.
  const tag = fragmentTag(ctx, props.state, result);
  ctx.set('ETag', tag);
  ctx.set('Cache-Control', 'private, no-cache');
  ctx.set('Vary', 'X-Requested-With');
  if (ifNoneMatchHits(ctx.get('If-None-Match'), tag)) {
    ctx.status = 304;
    return;
  }
  renderHtml(ctx, <TableFragment>{options.table(props)}</TableFragment>);
}

function fragmentTag(ctx: RouterContext, state: TableState, result: unknown): string {
  const { user, csrfToken, timeZone } = pageContext(ctx);
  const hash = createHash('sha256')
    .update(JSON.stringify([ctx.path, state, user?.id, user?.role, csrfToken, timeZone, result]))
    .digest('base64url')
    .slice(0, 27);
  return `W/"${hash}"`;
}
