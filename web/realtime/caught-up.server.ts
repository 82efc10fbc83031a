import type { Context } from 'koa';
import type { ProjectionName } from '#projections/all-projections.ts';
import type { AppDeps } from '../app-deps.server.ts';
import { earlierMark } from './live-mark.ts';
import type { LiveMarks } from './live-marks.ts';
import { readMarks } from './live-marks.server.ts';

/** How long a live refresh waits for a lagging read model before showing what it has. */
const CATCH_UP_MS = 2_000;

/**
 * Browsers are told of a change once the competitor list has projected it (change-feed.server.ts) and
 * then refetch their regions. A page read from other read models (the note history, the audit log, the
 * segment board), each projected on its own, must not claim the list's position for data those models
 * do not have yet: nothing would bring the change later (the page's position says it is up to date).
 * - A refetch (XHR) waits for those models to reach the list's checkpoint first.
 * - A page opened by hand shows what is there at once, and says it stands where the slowest of its
 *   models stood (`<meta name="live-position">`, read before its data): its first head check then
 *   finds the list further on and refetches, which waits.
 */
export async function catchUpWithList(
  ctx: Context,
  deps: Pick<AppDeps, 'db' | 'watcher'>,
  projections: readonly ProjectionName[],
): Promise<void> {
  if (ctx.get('X-Requested-With') !== 'XMLHttpRequest') return standWhereModelsStand(ctx, deps, projections);
  const { rows } = await deps.db.pool.query<{ transaction_id: string; position: string | number }>(
    `SELECT transaction_id::text, position FROM projection_checkpoints WHERE projection = 'competitor-list'`,
  );
  const row = rows[0];
  if (!row) return;
  const target = { transactionId: row.transaction_id, position: Number(row.position) };
  await deps.watcher.waitFor(projections, target, CATCH_UP_MS);
}

/** Lowers a full page's rendered mark (liveMarksAtRender) to its slowest read model's checkpoint. */
async function standWhereModelsStand(
  ctx: Context,
  deps: Pick<AppDeps, 'db'>,
  projections: readonly ProjectionName[],
): Promise<void> {
  const live = ctx.state.liveMarks as LiveMarks | undefined;
  if (!live) return;
  ctx.state.liveMarks = { ...live, list: earlierMark(live.list, await readMarks(deps.db.pool, projections)) };
}
