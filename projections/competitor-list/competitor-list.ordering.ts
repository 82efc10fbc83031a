import type { Recorded } from '#events/envelope.ts';
import type { OrderingEvent } from '#events/ordering/events.ts';
import type { Queryable } from '#infra/db/database.ts';
import { applyMove } from '#events/ordering/apply-move.ts';
import type { TableNames } from '../projection.ts';

type Tables = TableNames<'competitor_list' | 'competitor_list_order'>;

/** Above this many rank moves in one batch, the ranks are recomputed in memory and written at once. */
const SHIFTS_IN_SQL = 3;

/**
 * Applies reorders with the rules the ordering decider folds with (events/ordering/apply-move.ts):
 * a rank change takes the competitor out and puts it in at `to`, clamped; the others close up.
 */
export async function applyOrdering(
  db: Queryable,
  events: readonly Recorded<OrderingEvent>[],
  tables: Tables,
  segmentName: (id: string) => string,
): Promise<void> {
  const rankMoves = events.filter((e) => e.type === 'CompetitorRankChanged');
  if (rankMoves.length > SHIFTS_IN_SQL) await moveRanksInMemory(db, tables, rankMoves);
  for (const event of events) {
    switch (event.type) {
      case 'CompetitorRankChanged':
        if (rankMoves.length <= SHIFTS_IN_SQL)
          await moveRank(db, tables, event.data.competitorId, event.data.to);
        break;
      case 'CompetitorMovedToSegment':
        await db.query(
          `UPDATE ${tables.competitor_list} SET segment_id = $2, segment_name = $3, updated_at = $4 WHERE id = $1`,
          [
            event.data.competitorId,
            event.data.toSegmentId,
            segmentName(event.data.toSegmentId),
            event.metadata.at,
          ],
        );
        break;
      case 'SegmentsReordered':
        break;
    }
  }
  const version = Math.max(...events.map((e) => e.streamVersion));
  await db.query(
    `INSERT INTO ${tables.competitor_list_order} (id, version) VALUES (true, $1)
     ON CONFLICT (id) DO UPDATE SET version = greatest(${tables.competitor_list_order}.version, EXCLUDED.version)`,
    [version],
  );
}

/** One move in one statement: the competitor goes to `to` (clamped to 1..n), the ranks between shift by one. */
async function moveRank(db: Queryable, tables: Tables, competitorId: string, to: number): Promise<void> {
  const t = tables.competitor_list;
  await db.query(
    `WITH cur AS (SELECT rank AS r FROM ${t} WHERE id = $1),
          target AS (SELECT cur.r, least(greatest($2::int, 1), (SELECT max(rank) FROM ${t})) AS t FROM cur)
     UPDATE ${t} c
     SET rank = CASE WHEN c.id = $1 THEN target.t WHEN target.t < target.r THEN c.rank + 1 ELSE c.rank - 1 END
     FROM target
     WHERE c.id = $1 OR (c.rank BETWEEN least(target.t, target.r) AND greatest(target.t, target.r))`,
    [competitorId, to],
  );
}

async function moveRanksInMemory(
  db: Queryable,
  tables: Tables,
  moves: readonly Recorded<OrderingEvent>[],
): Promise<void> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM ${tables.competitor_list} ORDER BY rank, id`,
  );
  const list = rows.map((r) => r.id);
  const before = new Map(list.map((id, i) => [id, i]));
  for (const move of moves) {
    if (move.type === 'CompetitorRankChanged') applyMove(list, move.data.competitorId, move.data.to);
  }
  const changed = list.flatMap((id, i) => (before.get(id) === i ? [] : [{ id, rank: i + 1 }]));
  if (changed.length === 0) return;
  await db.query(
    `UPDATE ${tables.competitor_list} c SET rank = x.rank
     FROM unnest($1::uuid[], $2::int[]) AS x(id, rank) WHERE c.id = x.id`,
    [changed.map((c) => c.id), changed.map((c) => c.rank)],
  );
}
