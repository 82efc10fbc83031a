import { can } from '#events/user/permissions.ts';
import type { SessionUser } from '../pages/page-context.ts';
import { route, type RouteDef } from '../routing.server.ts';
import { readLivePositions } from './live-positions.server.ts';

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
    const user = ctx.state.user as SessionUser;
    const positions = await readLivePositions(deps.db.pool, can(user.role, 'audit.view'));
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { ...positions, userId: user.id };
  }),
];
