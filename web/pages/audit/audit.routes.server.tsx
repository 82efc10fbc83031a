import {
  auditSortColumns,
  listAudit,
  type AuditSortColumn,
} from '#projections/audit-log/audit-log.queries.ts';
import { parseTableState, sortOf } from '../../components/data-table/table-state.ts';
import { isXhr, pageContext, renderHtml } from '../../render.server.tsx';
import { route, type RouteDef } from '../../routing.server.ts';
import { AuditFragment, AuditPage } from './audit.page.tsx';

export const auditRoutes: RouteDef[] = [
  route('GET', '/audit', 'audit.view', async (ctx, deps) => {
    const parsed = parseTableState(ctx.query, auditSortColumns);
    const sort = sortOf(parsed);
    const result = await listAudit(deps.db.pool, {
      search: parsed.search,
      sort: sort ? { column: sort.column as AuditSortColumn, direction: sort.direction } : undefined,
      page: parsed.page,
      perPage: parsed.perPage,
    });
    const props = { ...result, page: pageContext(ctx), state: { ...parsed, page: result.page } };
    renderHtml(ctx, isXhr(ctx) ? <AuditFragment {...props} /> : <AuditPage {...props} />);
  }),
];
