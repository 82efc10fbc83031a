import type { EventStore } from '#events/store/event-store.ts';
import type { Database } from '#infra/db/database.ts';
import { heldBackNotice } from '#projections/held-back-by.ts';
import { projectionLags } from '#projections/lag.ts';

/**
 * What `projections:status` prints: the head, a line per projection with the figures /ops, /readyz and
 * /metrics show (projections/lag.ts), and, when changes wait behind a transaction left open longer than
 * `maxLagSeconds`, which transaction it is.
 */
export async function projectionsStatusLines(
  db: Database,
  store: EventStore,
  maxLagSeconds: number,
): Promise<string[]> {
  const [head, lags] = await Promise.all([store.headPosition(), projectionLags(db.pool)]);
  const lines = [`head position ${head}`];
  for (const lag of lags) {
    const behind = `behind ${String(lag.lagEvents).padStart(7)} events, ${Math.round(lag.lagSeconds)} s`;
    lines.push(
      `${lag.name.padEnd(20)} v${lag.version}  position ${String(lag.position).padStart(9)}  ${behind}  ${lag.updatedAt ? `updated ${lag.updatedAt.toISOString()}` : 'never run'}${lag.builtVersion === null ? '' : versionNote(lag.builtVersion, lag.version)}`,
    );
  }
  const notice = await heldBackNotice(db, lags, maxLagSeconds);
  if (notice) lines.push(notice);
  return lines;
}

function versionNote(built: number, code: number): string {
  if (built < code) return `  (will rebuild: built as v${built}, the code has v${code})`;
  if (built > code) return `  (built by a newer version of Rivals, v${built}: left to it)`;
  return '';
}
