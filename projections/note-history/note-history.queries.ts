import type { Queryable } from '#infra/db/database.ts';

export interface NoteVersion {
  column: string;
  noteVersion: number;
  value: string;
  previousValue: string;
  actorName: string;
  changedAt: Date;
}

export async function noteHistory(
  db: Queryable,
  competitorId: string,
  column?: string,
): Promise<NoteVersion[]> {
  const { rows } = await db.query<NoteVersion>(
    `SELECT column_name AS "column", note_version AS "noteVersion", value, previous_value AS "previousValue",
            actor_name AS "actorName", changed_at AS "changedAt"
     FROM note_history WHERE competitor_id = $1 AND ($2::text IS NULL OR column_name = $2)
     ORDER BY changed_at DESC, note_version DESC`,
    [competitorId, column ?? null],
  );
  return rows;
}
