import type { Queryable } from '#infra/db/database.ts';
import { allProjections } from './all-projections.ts';
import type { Projection } from './projection.ts';

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
  updatedAt: Date | null;
}

/** Checkpoint, head and lag of every projection: for /ops, /readyz, /metrics and the CLI. */
export async function projectionLags(
  db: Queryable,
  projections: readonly Projection[] = allProjections,
): Promise<ProjectionLag[]> {
  const { rows } = await db.query<{
    projection: string;
    version: number;
    position: number;
    updated_at: Date;
    waiting_seconds: number | null;
  }>(
    `SELECT c.projection, c.version, c.position, c.updated_at,
            extract(epoch FROM now() - (SELECT e.recorded_at FROM events e WHERE e.position > c.position
                                        ORDER BY e.position LIMIT 1))::float8 AS waiting_seconds
     FROM projection_checkpoints c`,
  );
  const { rows: headRows } = await db.query<{ head: number }>(
    'SELECT coalesce(max(position), 0)::bigint AS head FROM events',
  );
  const head = headRows[0]?.head ?? 0;
  const byName = new Map(rows.map((r) => [r.projection, r]));
  return projections.map((p) => {
    const row = byName.get(p.name);
    const position = row?.position ?? 0;
    return {
      name: p.name,
      version: p.version,
      builtVersion: row?.version ?? null,
      position,
      head,
      lagEvents: Math.max(0, head - position),
      lagSeconds: head > position ? Math.max(0, row?.waiting_seconds ?? 0) : 0,
      updatedAt: row?.updated_at ?? null,
    };
  });
}
