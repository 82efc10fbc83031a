import { z } from 'zod';
import { noteColumns } from '#events/competitor/fields.ts';
import { NotFoundError } from '#infra/errors.ts';
import { lastKnownName } from '#projections/audit-log/audit-log.queries.ts';
import { competitorAsOf } from '#projections/competitor-list/competitor-as-of.ts';
import { findCompetitor } from '#projections/competitor-list/competitor-list.queries.ts';
import { noteHistory } from '#projections/note-history/note-history.queries.ts';
import { pageContext, renderHtml } from '../../render.server.tsx';
import { route, type RouteDef } from '../../routing.server.ts';
import { HistoryPage } from './history.page.tsx';

const historyQuery = z.object({
  column: z.enum(noteColumns).optional().catch(undefined),
  // datetime-local has no zone; the form says UTC.
  asOf: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/)
    .optional()
    .catch(undefined),
});

export const historyRoutes: RouteDef[] = [
  route('GET', '/competitors/:id/history', 'history.view', async (ctx, deps) => {
    // A UUID: checked by the router before any handler runs (web/input.server.ts).
    const id = ctx.params.id ?? '';
    const query = historyQuery.parse({
      column: ctx.query.column || undefined,
      asOf: ctx.query.asOf || undefined,
    });
    const current = await findCompetitor(deps.db.pool, id);
    const name = current?.name ?? (await lastKnownName(deps.db.pool, id));
    if (!name) throw new NotFoundError('No such competitor.');
    const versions = await noteHistory(deps.db.pool, id, query.column);
    let asOf;
    if (query.asOf) {
      const at = new Date(`${query.asOf}${query.asOf.length === 16 ? ':00' : ''}Z`);
      if (!Number.isNaN(at.getTime())) {
        asOf = { at, input: query.asOf, card: await competitorAsOf(deps.store, deps.db.pool, id, at) };
      }
    }
    renderHtml(
      ctx,
      <HistoryPage
        page={pageContext(ctx)}
        competitorId={id}
        name={name}
        deleted={!current}
        column={query.column ?? ''}
        versions={versions}
        asOf={asOf}
      />,
    );
  }),
];
