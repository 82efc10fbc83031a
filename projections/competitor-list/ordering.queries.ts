import type { Queryable } from '#infra/db/database.ts';
import type { Threat } from '#events/competitor/fields.ts';

/** The version of the order the ranks reflect: what a drop sends back as `expect`. */
export async function orderingVersion(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ version: number }>('SELECT version FROM competitor_list_order');
  return rows[0]?.version ?? 0;
}

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
