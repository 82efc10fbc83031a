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

/** The rows and counts of the page shown (named, not `...rest`: a rest pattern copies slowly). */
const resultOf = (props: ListViewProps): ListResult => ({
  rows: props.rows,
  count: props.count,
  page: props.state.page,
  lastPage: props.lastPage,
});

/** The list's two renderings, made once (not per request). */
const listViews = {
  sortColumns: competitorSortColumns,
  page: (props: ListViewProps) => (
    <CompetitorListPage page={props.page} state={props.state} result={resultOf(props)} />
  ),
  table: (props: ListViewProps) => (
    <CompetitorTable page={props.page} state={props.state} result={resultOf(props)} />
  ),
};

const listOptions = (deps: AppDeps) => ({
  ...listViews,
  reads: deps.searchReads,
  query: (query: ListQuery, db: Queryable): Promise<ListResult> =>
    listCompetitors(db, query, deps.searchPages),
});

/**
 * The list route's options, made once per app, not per request: built inline (a spread and a function
 * that tsx names with a property definition each time) they were ~20 µs a request of the route's own
 * time in the profile; made once, ~10 µs less in all.
 */
const optionsByApp = new WeakMap<AppDeps, ReturnType<typeof listOptions>>();
const listOptionsOf = (deps: AppDeps) => {
  let options = optionsByApp.get(deps);
  if (!options) {
    options = listOptions(deps);
    optionsByApp.set(deps, options);
  }
  return options;
};

export const competitorListRoutes: RouteDef[] = [
  route('GET', '/competitors', 'competitors.view', (ctx, deps) => renderTableRoute(ctx, listOptionsOf(deps))),

  route('GET', '/competitors/:id', 'competitors.view', async (ctx, deps) => {
    const competitor = await loadCompetitor(deps, ctx.params.id);
    renderHtml(ctx, <BattlecardPage page={pageContext(ctx)} competitor={competitor} />);
  }),
];
