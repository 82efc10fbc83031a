import { pageContext, renderHtml } from '../render.server.tsx';
import { route, type RouteDef } from '../routing.server.ts';
import { loadOpsStatus } from './ops/ops-status.server.ts';
import { OpsPage } from './ops/ops.page.tsx';

export const overviewRoutes: RouteDef[] = [
  route('GET', '/ops', 'ops.view', async (ctx, deps) => {
    renderHtml(ctx, <OpsPage page={pageContext(ctx)} status={await loadOpsStatus(deps)} />);
  }),
];
