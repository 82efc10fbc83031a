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
