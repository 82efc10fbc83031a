import type { Context, Middleware } from 'koa';
import { startOfLog } from '#events/envelope.ts';
import { can } from '#events/user/permissions.ts';
import type { Queryable } from '#infra/db/database.ts';
import type { ProjectionName } from '#projections/all-projections.ts';
import type { SessionUser } from '../pages/page-context.ts';
import { earlierMark, markOf, type LiveMark } from './live-mark.ts';
import type { LiveMarks } from './live-marks.ts';

/** The checkpoints of the named read models, the earliest first: one primary-key read each. */
export async function readMarks(db: Queryable, projections: readonly ProjectionName[]): Promise<LiveMark> {
  const { rows } = await db.query<{ transaction_id: string; position: string | number }>(
    `SELECT transaction_id::text, position FROM projection_checkpoints WHERE projection = ANY($1::text[])`,
    [projections],
  );
  const marks = rows.map((row) =>
    markOf({ transactionId: row.transaction_id, position: Number(row.position) }),
  );
  // A read model without a checkpoint yet stands at the start.
  if (marks.length < projections.length) return markOf(startOfLog);
  return marks.reduce(earlierMark);
}

/** The list's checkpoint, and for those who may read the audit log, its checkpoint (`withAudit`). */
export async function readLiveMarks(db: Queryable, withAudit: boolean): Promise<LiveMarks> {
  const list = await readMarks(db, ['competitor-list']);
  return withAudit ? { list, audit: await readMarks(db, ['audit-log']) } : { list };
}

const fullPage = (ctx: Context) =>
  ctx.method === 'GET' && ctx.get('X-Requested-With') !== 'XMLHttpRequest' && ctx.accepts('html') === 'html';

/**
 * A full page, as its browser will first know it, says how far the read models were when it was
 * rendered (`ctx.state.liveMarks`, read before the page's own data, so never ahead of it: a page
 * that is in fact further on is refreshed once, needlessly and harmlessly). Without
 * that, a tab learned its starting point from its first head check after loading: a change projected
 * between the render and that check (before its socket joined) set the starting point past it, and
 * the page never showed it. Only full pages of signed-in users; refreshes (XHR) already follow.
 */
export function liveMarksAtRender(db: Queryable): Middleware {
  return async (ctx, next) => {
    const user = ctx.state.user as SessionUser | undefined;
    if (user && fullPage(ctx)) {
      // The list's mark came with the session (sessions.server.ts: no round trip of its own); the
      // audit log's, only on its own page.
      const listMark = ctx.state.listMark as LiveMark | undefined;
      const withAudit = ctx.path.startsWith('/audit') && can(user.role, 'audit.view');
      ctx.state.liveMarks =
        listMark === undefined || withAudit ? await readLiveMarks(db, withAudit) : { list: listMark };
    }
    await next();
  };
}
