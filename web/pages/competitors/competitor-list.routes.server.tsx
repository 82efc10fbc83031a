import {
  competitorSortColumns,
  listCompetitors,
  type ListQuery,
  type ListResult,
} from '#projections/competitor-list/competitor-list.queries.ts';
import type { Queryable } from '#infra/db/database.ts';
import type { AppDeps } from '../../app-deps.server.ts';
import type { TableState } from '../../components/data-table/table-state.ts';
import type { PageContext } from '../page-context.ts';
import { renderTableRoute } from '../../table-route.server.tsx';
import { pageContext, renderHtml } from '../../render.server.tsx';
import { route, type RouteDef } from '../../routing.server.ts';
import { BattlecardPage } from './battlecard.page.tsx';
import { loadCompetitor } from './competitor-form.routes.server.tsx';
import { CompetitorListPage, CompetitorTable } from './competitor-list.page.tsx';

type ListViewProps = { page: PageContext; state: TableState } & ListResult;

/** The list's two renderings, made once (not per request). */
const listViews = {
  sortColumns: competitorSortColumns,
  page: ({ page, state, ...result }: ListViewProps) => (
    <CompetitorListPage page={page} state={state} result={{ ...result, page: state.page }} />
  ),
  table: ({ page, state, ...result }: ListViewProps) => (
    <CompetitorTable page={page} state={state} result={{ ...result, page: state.page }} />
  ),
};

/**
 * The list's query over the app's search cache. Returned, not written inline in the route: tsx
 * (keepNames) names each inline function it creates with a property definition, several µs per request.
 */
const listQuery =
  (deps: AppDeps) =>
  (query: ListQuery, db: Queryable): Promise<ListResult> =>
    listCompetitors(db, query, deps.searchPages);

export const competitorListRoutes: RouteDef[] = [
  route('GET', '/competitors', 'competitors.view', (ctx, deps) =>
    renderTableRoute(ctx, {
      ...listViews,
      reads: deps.searchReads,
      query: listQuery(deps),
    }),
  ),

  route('GET', '/competitors/:id', 'competitors.view', async (ctx, deps) => {
    const competitor = await loadCompetitor(deps, ctx.params.id);
    renderHtml(ctx, <BattlecardPage page={pageContext(ctx)} competitor={competitor} />);
  }),
];
