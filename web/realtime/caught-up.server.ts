import type { Context } from 'koa';
import type { ProjectionName } from '#projections/all-projections.ts';
import type { AppDeps } from '../app-deps.server.ts';

/** How long a live refresh waits for a lagging read model before showing what it has. */
const CATCH_UP_MS = 2_000;

/**
 * Browsers are told of a change once the competitor list has projected it (change-feed.server.ts) and
 * then refetch their regions. A page read from other read models (the note history, the audit log), each
 * projected on its own, waits for those to reach the list's checkpoint first: read earlier, it showed the
 * page as it was, and nothing brought the change later (the page's position said it was up to date).
 * Only the page's own refetches (XHR) wait; a page opened by hand shows what is there at once.
 */
export async function catchUpWithList(
  ctx: Context,
  deps: Pick<AppDeps, 'db' | 'watcher'>,
  projections: readonly ProjectionName[],
): Promise<void> {
  if (ctx.get('X-Requested-With') !== 'XMLHttpRequest') return;
  const { rows } = await deps.db.pool.query<{ transaction_id: string; position: string | number }>(
    `SELECT transaction_id::text, position FROM projection_checkpoints WHERE projection = 'competitor-list'`,
  );
  const row = rows[0];
  if (!row) return;
  const target = { transactionId: row.transaction_id, position: Number(row.position) };
  await deps.watcher.waitFor(projections, target, CATCH_UP_MS);
}
