import {
  competitorSortColumns,
  listCompetitors,
  type CompetitorSortColumn,
} from '#projections/competitor-list/competitor-list.queries.ts';
import { parseTableState, sortOf } from '../../components/data-table/table-state.ts';
import { isXhr, pageContext, renderHtml } from '../../render.server.tsx';
import { route, type RouteDef } from '../../routing.server.ts';
import { BattlecardPage } from './battlecard.page.tsx';
import { loadCompetitor } from './competitor-form.routes.server.tsx';
import { CompetitorListFragment, CompetitorListPage } from './competitor-list.page.tsx';

export const competitorListRoutes: RouteDef[] = [
  route('GET', '/competitors', 'competitors.view', async (ctx, deps) => {
    const parsed = parseTableState(ctx.query, competitorSortColumns);
    const sort = sortOf(parsed);
    const result = await listCompetitors(deps.db.pool, {
      search: parsed.search,
      sort: sort ? { column: sort.column as CompetitorSortColumn, direction: sort.direction } : undefined,
      page: parsed.page,
      perPage: parsed.perPage,
    });
    const state = { ...parsed, page: result.page };
    const props = { page: pageContext(ctx), state, result };
    renderHtml(ctx, isXhr(ctx) ? <CompetitorListFragment {...props} /> : <CompetitorListPage {...props} />);
  }),

  route('GET', '/competitors/:id', 'competitors.view', async (ctx, deps) => {
    const competitor = await loadCompetitor(deps, ctx.params.id);
    renderHtml(ctx, <BattlecardPage page={pageContext(ctx)} competitor={competitor} />);
  }),
];
