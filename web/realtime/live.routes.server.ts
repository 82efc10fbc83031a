import type { SessionUser } from '../pages/page-context.ts';
import { route, type RouteDef } from '../routing.server.ts';

/**
 * GET /live/position: how far the competitor list has been projected. Broadcasts are hints; a browser
 * that may have missed some (Redis restarted, the tab slept, the socket reconnected) compares this with
 * the last position it applied and refetches its regions when behind. One primary-key read. It names
 * the signed-in user: a page whose browser is now signed in as someone else must not take their view.
 */
export const liveRoutes: RouteDef[] = [
  route('GET', '/live/position', 'competitors.view', async (ctx, deps) => {
    const { rows } = await deps.db.pool.query<{ position: number }>(
      `SELECT position FROM projection_checkpoints WHERE projection = 'competitor-list'`,
    );
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { position: rows[0]?.position ?? 0, userId: (ctx.state.user as SessionUser).id };
  }),
];
