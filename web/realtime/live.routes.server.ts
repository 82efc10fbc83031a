import { can } from '#events/user/permissions.ts';
import type { SessionUser } from '../pages/page-context.ts';
import { route, type RouteDef } from '../routing.server.ts';

/**
 * GET /live/position: how far the competitor list has been projected. Broadcasts are hints; a browser
 * that may have missed some (Redis restarted, the tab slept, the socket reconnected) compares this with
 * the last position it applied and refetches its regions when behind. One primary-key read. It names
 * the signed-in user: a page whose browser is now signed in as someone else must not take their view.
 * For those who may read the audit log, also its newest line (`audit`), which the audit feed's messages
 * are compared with: user changes and operator actions reach no other position. One index probe.
 */
export const liveRoutes: RouteDef[] = [
  route('GET', '/live/position', 'competitors.view', async (ctx, deps) => {
    const { rows } = await deps.db.pool.query<{ position: number }>(
      `SELECT position FROM projection_checkpoints WHERE projection = 'competitor-list'`,
    );
    const user = ctx.state.user as SessionUser;
    const audit = can(user.role, 'audit.view')
      ? (
          await deps.db.pool.query<{ position: number | null }>(
            'SELECT max(position)::bigint AS position FROM audit_log',
          )
        ).rows[0]?.position
      : undefined;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      position: rows[0]?.position ?? 0,
      ...(audit !== undefined ? { audit: Number(audit ?? 0) } : {}),
      userId: user.id,
    };
  }),
];
