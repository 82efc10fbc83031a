import { auditSortColumns, listAudit } from '#projections/audit-log/audit-log.queries.ts';
import { renderTableRoute } from '../../table-route.server.tsx';
import { catchUpWithList } from '../../realtime/caught-up.server.ts';
import { route, type RouteDef } from '../../routing.server.ts';
import { AuditPage, AuditTable } from './audit.page.tsx';

export const auditRoutes: RouteDef[] = [
  route('GET', '/audit', 'audit.view', async (ctx, deps) => {
    await catchUpWithList(ctx, deps, ['audit-log']);
    await renderTableRoute(ctx, {
      sortColumns: auditSortColumns,
      reads: deps.searchReads,
      query: (query, db) => listAudit(db, query, deps.searchPages),
      page: (props) => <AuditPage {...props} />,
      table: (props) => <AuditTable {...props} />,
    });
  }),
];
