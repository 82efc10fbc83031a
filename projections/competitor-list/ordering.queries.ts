import { withTransaction, type Pool, type Queryable } from '#infra/db/database.ts';
import type { Threat } from '#events/competitor/fields.ts';
import { listSegments, type Segment } from '../segment-board/segment-board.queries.ts';

export interface SortableCompetitor {
  id: string;
  name: string;
  segmentId: string;
  segmentName: string;
  threat: Threat;
  rank: number;
}

/** Up to `limit` competitors in rank order (ask for one more than you show to know there are more). */
export async function competitorsByRank(db: Queryable, limit: number): Promise<SortableCompetitor[]> {
  const { rows } = await db.query<{
    id: string;
    name: string;
    segment_id: string;
    segment_name: string;
    threat: Threat;
    rank: number;
  }>(
    `SELECT id, name, segment_id, segment_name, threat, rank FROM competitor_list ORDER BY rank, id LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    segmentId: r.segment_id,
    segmentName: r.segment_name,
    threat: r.threat,
    rank: r.rank,
  }));
}

/** The drag-sorted pages' data, all from one snapshot of the read models. */
export interface OrderingView {
  rows: SortableCompetitor[];
  /** Live competitors in all (the ranking may show only its top). */
  total: number;
  segments: Segment[];
  /** The version the competitors' order reflects: what a ranking drop expects. */
  rankingVersion: number;
  /**
   * The version the whole board reflects: the segment order and the competitors' order are projected
   * separately, so a board drop expects the older of the two (a newer one is refused as stale, never
   * saved over a move the page does not show yet).
   */
  boardVersion: number;
}

/**
 * Up to `limit` competitors in rank order, the segments and the versions, read in one repeatable-read
 * transaction: separate statements could each see a different commit, and a page showing one order with
 * a newer version would have its next drop accepted over the change it does not show.
 */
export function readOrdering(pool: Pool, limit: number): Promise<OrderingView> {
  return withTransaction(pool, async (client) => {
    await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const rows = await competitorsByRank(client, limit);
    const segments = await listSegments(client);
    const { rows: versions } = await client.query<{ ranking: number; board: number; total: number }>(
      `SELECT coalesce((SELECT version FROM competitor_list_order), 0) AS ranking,
              coalesce((SELECT version FROM segment_board_order), 0) AS board,
              (SELECT coalesce(max(rank), 0)::int FROM competitor_list) AS total`,
    );
    const ranking = versions[0]?.ranking ?? 0;
    return {
      rows,
      total: versions[0]?.total ?? rows.length,
      segments,
      rankingVersion: ranking,
      boardVersion: Math.min(ranking, versions[0]?.board ?? 0),
    };
  });
}
