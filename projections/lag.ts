import type { Queryable } from '#infra/db/database.ts';
import { allProjections } from './all-projections.ts';
import type { Projection } from './projection.ts';
import { horizonCte } from '#events/store/event-log-reader.ts';

export interface ProjectionLag {
  name: string;
  /** The code's version, and the one the live tables were built with (null: never run). */
  version: number;
  builtVersion: number | null;
  position: number;
  head: number;
  /** Events committed after the checkpoint (by position). */
  lagEvents: number;
  /** How long the oldest event not yet projected has waited (0 when caught up). */
  lagSeconds: number;
  /**
   * Of those, the ones it may read now: below the oldest transaction still open that may write events
   * (decisions 0002, 0028). Behind on these, the projection itself is slow or stopped.
   */
  readableEvents: number;
  /** How long the oldest of those has waited (0: none), the first after the checkpoint in commit order. */
  readableSeconds: number;
  /**
   * How long the oldest committed event waiting behind a transaction still open has waited (0: none
   * waits). The same for every projection: one transaction holds every reader of the log back, on every
   * instance (decision 0022).
   */
  heldBackSeconds: number;
  updatedAt: Date | null;
}

/** Checkpoint, head and lag of every projection: for /ops, /readyz, /metrics and the CLI. */
export async function projectionLags(
  db: Queryable,
  projections: readonly Projection[] = allProjections,
): Promise<ProjectionLag[]> {
  // Each subquery walks the (transaction_id, position) or position index from one end, LIMIT 1: the
  // probes run this every few seconds, and the rows after a checkpoint are the newest of a long log.
  const { rows } = await db.query<{
    projection: string;
    version: number;
    position: number;
    updated_at: Date;
    waiting_seconds: number | null;
    readable_seconds: number | null;
  }>(
    `WITH ${horizonCte}
     SELECT c.projection, c.version, c.position, c.updated_at,
            extract(epoch FROM now() - (SELECT e.recorded_at FROM events e WHERE e.position > c.position
                                        ORDER BY e.position LIMIT 1))::float8 AS waiting_seconds,
            extract(epoch FROM now() - (SELECT e.recorded_at FROM events e
                                        WHERE (e.transaction_id, e.position) > (c.transaction_id, c.position)
                                          AND e.transaction_id < h.xmin
                                        ORDER BY e.transaction_id, e.position LIMIT 1))::float8 AS readable_seconds
     FROM projection_checkpoints c, h`,
  );
  const { rows: logRows } = await db.query<{
    head: number;
    readable_head: number | null;
    held_back_seconds: number | null;
  }>(
    `WITH ${horizonCte}
     SELECT coalesce((SELECT max(position) FROM events), 0)::bigint AS head,
            (SELECT e.position FROM events e WHERE e.transaction_id < h.xmin
             ORDER BY e.transaction_id DESC, e.position DESC LIMIT 1) AS readable_head,
            extract(epoch FROM now() - (SELECT e.recorded_at FROM events e WHERE e.transaction_id >= h.xmin
                                        ORDER BY e.transaction_id, e.position LIMIT 1))::float8 AS held_back_seconds
     FROM h`,
  );
  const head = logRows[0]?.head ?? 0;
  // The newest event it may read, by commit order; the whole log when nothing waits.
  const readableHead = logRows[0]?.held_back_seconds == null ? head : (logRows[0]?.readable_head ?? 0);
  const heldBackSeconds = Math.max(0, logRows[0]?.held_back_seconds ?? 0);
  const byName = new Map(rows.map((r) => [r.projection, r]));
  return projections.map((p) => {
    const row = byName.get(p.name);
    const position = row?.position ?? 0;
    const readableEvents = Math.max(0, readableHead - position);
    return {
      name: p.name,
      version: p.version,
      builtVersion: row?.version ?? null,
      position,
      head,
      lagEvents: Math.max(0, head - position),
      lagSeconds: head > position ? Math.max(0, row?.waiting_seconds ?? 0) : 0,
      readableEvents,
      readableSeconds: Math.max(0, row?.readable_seconds ?? 0),
      heldBackSeconds: head > position ? heldBackSeconds : 0,
      updatedAt: row?.updated_at ?? null,
    };
  });
}
