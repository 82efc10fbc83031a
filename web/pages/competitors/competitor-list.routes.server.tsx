import {
  competitorSortColumns,
  listCompetitors,
} from '#projections/competitor-list/competitor-list.queries.ts';
import { renderTableRoute } from '../../table-route.server.tsx';
import { pageContext, renderHtml } from '../../render.server.tsx';
import { route, type RouteDef } from '../../routing.server.ts';
import { BattlecardPage } from './battlecard.page.tsx';
import { loadCompetitor } from './competitor-form.routes.server.tsx';
import { CompetitorListPage, CompetitorTable } from './competitor-list.page.tsx';

export const competitorListRoutes: RouteDef[] = [
  route('GET', '/competitors', 'competitors.view', (ctx, deps) =>
    renderTableRoute(ctx, {
      sortColumns: competitorSortColumns,
      query: (query) => listCompetitors(deps.db.pool, query, deps.searchPages),
      page: ({ page, state, ...result }) => (
        <CompetitorListPage page={page} state={state} result={{ ...result, page: state.page }} />
      ),
      table: ({ page, state, ...result }) => (
        <CompetitorTable page={page} state={state} result={{ ...result, page: state.page }} />
      ),
    }),
  ),

  route('GET', '/competitors/:id', 'competitors.view', async (ctx, deps) => {
    const competitor = await loadCompetitor(deps, ctx.params.id);
    renderHtml(ctx, <BattlecardPage page={pageContext(ctx)} competitor={competitor} />);
  }),
];
