import type { Queryable } from '#infra/db/database.ts';

export interface NoteVersion {
  column: string;
  noteVersion: number;
  value: string;
  previousValue: string;
  actorName: string;
  changedAt: Date;
}

export interface NoteHistoryPage {
  versions: NoteVersion[];
  /** Every version of the selection (all notes, or one column), for the page count. */
  total: number;
  /** The page shown: the one asked for, or the last one if it asked past the end. */
  page: number;
}

/**
 * One page of a competitor's note versions, newest first. A history is one competitor's (thousands of
 * versions at most), so the offset walks the `(competitor_id, changed_at)` index of that competitor only.
 */
export async function noteHistory(
  db: Queryable,
  competitorId: string,
  options: { column?: string; page: number; perPage: number },
): Promise<NoteHistoryPage> {
  const { column, perPage } = options;
  const { rows: counted } = await db.query<{ total: number }>(
    `SELECT count(*)::int AS total FROM note_history
     WHERE competitor_id = $1 AND ($2::text IS NULL OR column_name = $2)`,
    [competitorId, column ?? null],
  );
  const total = counted[0]?.total ?? 0;
  const page = Math.max(1, Math.min(options.page, Math.ceil(total / perPage)));
  const { rows: versions } = await db.query<NoteVersion>(
    `SELECT column_name AS "column", note_version AS "noteVersion", value, previous_value AS "previousValue",
            actor_name AS "actorName", changed_at AS "changedAt"
     FROM note_history WHERE competitor_id = $1 AND ($2::text IS NULL OR column_name = $2)
     ORDER BY changed_at DESC, note_version DESC, position DESC
     LIMIT $3 OFFSET $4`,
    [competitorId, column ?? null, perPage, (page - 1) * perPage],
  );
  return { versions, total, page };
}
