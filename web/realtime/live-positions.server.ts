import type { Context, Middleware } from 'koa';
import { can } from '#events/user/permissions.ts';
import type { Queryable } from '#infra/db/database.ts';
import type { SessionUser } from '../pages/page-context.ts';
import type { LivePositions } from './live-positions.ts';

/** One primary-key read, and for the audit log one index probe (`withAudit`). */
export async function readLivePositions(db: Queryable, withAudit: boolean): Promise<LivePositions> {
  const { rows } = await db.query<{ position: number }>(
    `SELECT position FROM projection_checkpoints WHERE projection = 'competitor-list'`,
  );
  const position = Number(rows[0]?.position ?? 0);
  if (!withAudit) return { position };
  const audit = await db.query<{ position: number | null }>(
    'SELECT max(position)::bigint AS position FROM audit_log',
  );
  return { position, audit: Number(audit.rows[0]?.position ?? 0) };
}

const fullPage = (ctx: Context) =>
  ctx.method === 'GET' && ctx.get('X-Requested-With') !== 'XMLHttpRequest' && ctx.accepts('html') === 'html';

/**
 * A full page, as its browser will first know it, says how far the read models were when it was
 * rendered (`ctx.state.livePositions`, read before the page's own data, so never ahead of it: a page
 * that is in fact further on is refreshed once, needlessly and harmlessly). Without
 * that, a tab learned its starting point from its first head check after loading: a change projected
 * between the render and that check (before its socket joined) set the starting point past it, and
 * the page never showed it. Only full pages of signed-in users; refreshes (XHR) already follow.
 */
export function livePositionsAtRender(db: Queryable): Middleware {
  return async (ctx, next) => {
    const user = ctx.state.user as SessionUser | undefined;
    if (user && fullPage(ctx)) {
      // The list's position came with the session (sessions.server.ts: no round trip of its own); the
      // audit log's, only on its own page.
      const listPosition = ctx.state.listPosition as number | undefined;
      const withAudit = ctx.path.startsWith('/audit') && can(user.role, 'audit.view');
      ctx.state.livePositions =
        listPosition === undefined || withAudit
          ? await readLivePositions(db, withAudit)
          : { position: listPosition };
    }
    await next();
  };
}
