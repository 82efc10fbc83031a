import { listCompetitors } from '#projections/competitor-list/competitor-list.queries.ts';
import { segmentBoard } from '#projections/segment-board/segment-board.queries.ts';
import { pageContext, renderHtml } from '../render.server.tsx';
import { route, type RouteDef } from '../routing.server.ts';
import { loadOpsStatus } from './ops/ops-status.server.ts';
import { OpsPage } from './ops/ops.page.tsx';
import { RankingPage } from './ranking/ranking.page.tsx';
import { SegmentsPage } from './segments/segments.page.tsx';

export const overviewRoutes: RouteDef[] = [
  route('GET', '/ranking', 'ranking.view', async (ctx, deps) => {
    const result = await listCompetitors(deps.db.pool, { search: '', page: 1, perPage: 100 });
    renderHtml(ctx, <RankingPage page={pageContext(ctx)} rows={result.rows} total={result.count.value} />);
  }),

  route('GET', '/segments', 'segments.view', async (ctx, deps) => {
    renderHtml(ctx, <SegmentsPage page={pageContext(ctx)} board={await segmentBoard(deps.db.pool)} />);
  }),

  route('GET', '/ops', 'ops.view', async (ctx, deps) => {
    renderHtml(ctx, <OpsPage page={pageContext(ctx)} status={await loadOpsStatus(deps)} />);
  }),
];
