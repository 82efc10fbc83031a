import { can } from '#events/user/permissions.ts';
import type { SessionUser } from '../pages/page-context.ts';
import { route, type RouteDef } from '../routing.server.ts';
import { positionOf } from './live-mark.ts';
import type { LivePositionAnswer } from './live-marks.ts';
import { readLiveMarks } from './live-marks.server.ts';

/**
 * GET /live/position: how far the competitor list has been projected. Broadcasts are hints; a browser
 * that may have missed some (Redis restarted, the tab slept, the socket reconnected) compares this with
 * the last mark it applied (live-mark.ts) and refetches its regions when behind. One primary-key read. It names
 * the signed-in user: a page whose browser is now signed in as someone else must not take their view.
 * For those who may read the audit log, also its checkpoint (`auditMark`), which the audit feed's messages
 * are compared with: user changes and operator actions reach no other read model. One more read.
 */
export const liveRoutes: RouteDef[] = [
  route('GET', '/live/position', 'competitors.view', async (ctx, deps) => {
    const user = ctx.state.user as SessionUser;
    const { list, audit } = await readLiveMarks(deps.db.pool, can(user.role, 'audit.view'));
    const answer: LivePositionAnswer = {
      list,
      ...(audit === undefined ? {} : { auditMark: audit, audit: positionOf(audit) }),
      userId: user.id,
      position: positionOf(list),
    };
    ctx.set('Cache-Control', 'no-store');
    ctx.body = answer;
  }),
];
