import { allProjections } from '#projections/all-projections.ts';
import { pageContext, renderHtml } from '../render.server.tsx';
import { route, type RouteDef } from '../routing.server.ts';
import { OpsPage } from './ops/ops.page.tsx';

export const overviewRoutes: RouteDef[] = [
  route('GET', '/ops', 'ops.view', async (ctx, deps) => {
    const pool = deps.db.pool;
    const head = await deps.store.headPosition();
    const { rows } = await pool.query<{
      projection: string;
      version: number;
      position: number;
      updated_at: Date;
    }>('SELECT projection, version, position, updated_at FROM projection_checkpoints');
    const { rows: rates } = await pool.query<{ minute: number; hour: number }>(
      `SELECT count(*) FILTER (WHERE recorded_at > now() - interval '1 minute')::int AS minute,
              count(*)::int AS hour
       FROM events WHERE recorded_at > now() - interval '1 hour'`,
    );
    const byName = new Map(rows.map((r) => [r.projection, r]));
    renderHtml(
      ctx,
      <OpsPage
        page={pageContext(ctx)}
        status={{
          head,
          projections: allProjections.map((p) => {
            const row = byName.get(p.name);
            return {
              name: p.name,
              version: p.version,
              position: row?.position ?? 0,
              lag: Math.max(0, head - (row?.position ?? 0)),
              updatedAt: row?.updated_at ?? null,
            };
          }),
          pending: await deps.bus.pendingCount(),
          deadLetters: await deps.bus.deadLetters(10),
          eventsLastMinute: rates[0]?.minute ?? 0,
          eventsLastHour: rates[0]?.hour ?? 0,
          database: deps.db.describe,
          bus: deps.redis ? 'Redis Streams' : 'in-process',
        }}
      />,
    );
  }),
];
