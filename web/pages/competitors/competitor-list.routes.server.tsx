import type Router from '@koa/router';
import {
  competitorSortColumns,
  listCompetitors,
  type CompetitorSortColumn,
} from '#projections/competitor-list/competitor-list.queries.ts';
import { parseTableState, sortOf } from '../../components/data-table/table-state.ts';
import { isXhr, pageContext, renderHtml } from '../../render.server.tsx';
import type { AppDeps } from '../../app-deps.server.ts';
import { CompetitorListFragment, CompetitorListPage } from './competitor-list.page.tsx';

export function competitorListRoutes(router: Router, deps: AppDeps): void {
  router.get('/competitors', async (ctx) => {
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
  });
}
