import type { Queryable } from '#infra/db/database.ts';

export interface Segment {
  id: string;
  name: string;
  position: number;
}

export async function listSegments(db: Queryable): Promise<Segment[]> {
  const { rows } = await db.query<Segment>('SELECT id, name, position FROM segment_board ORDER BY position');
  return rows;
}

export interface BoardColumn extends Segment {
  count: number;
  competitors: { id: string; name: string; threat: string; rank: number }[];
}

/** The board: each segment with its count and its highest-ranked competitors. */
export async function segmentBoard(db: Queryable, perSegment = 50): Promise<BoardColumn[]> {
  const segments = await listSegments(db);
  const { rows } = await db.query<{
    segment_id: string;
    id: string;
    name: string;
    threat: string;
    rank: number;
    total: number;
  }>(
    `SELECT s.id AS segment_id, c.id, c.name, c.threat, c.rank, s.total
     FROM (SELECT segment_id AS id, count(*)::int AS total FROM competitor_list GROUP BY segment_id) s
     CROSS JOIN LATERAL (
       SELECT id, name, threat, rank FROM competitor_list WHERE segment_id = s.id ORDER BY rank LIMIT $1
     ) c
     ORDER BY c.rank`,
    [perSegment],
  );
  return segments.map((segment) => {
    const mine = rows.filter((r) => r.segment_id === segment.id);
    return {
      ...segment,
      count: mine[0]?.total ?? 0,
      competitors: mine.map(({ id, name, threat, rank }) => ({ id, name, threat, rank })),
    };
  });
}
