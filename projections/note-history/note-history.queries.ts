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
 * One page of a competitor's note versions, newest first (in the order of the log), in constant time
 * however long the history: the whole history is `seq` 1..max and one note's is `note_version` 1..max
 * (migration 034), so the count is the largest of them and a page is a range of an index.
 */
export async function noteHistory(
  db: Queryable,
  competitorId: string,
  options: { column?: string; page: number; perPage: number },
): Promise<NoteHistoryPage> {
  const { column, perPage } = options;
  const { rows: counted } = await db.query<{ total: number }>(
    column === undefined
      ? 'SELECT coalesce(max(seq), 0)::int AS total FROM note_history WHERE competitor_id = $1'
      : `SELECT coalesce(max(note_version), 0)::int AS total FROM note_history
         WHERE competitor_id = $1 AND column_name = $2`,
    column === undefined ? [competitorId] : [competitorId, column],
  );
  const total = counted[0]?.total ?? 0;
  const page = Math.max(1, Math.min(options.page, Math.ceil(total / perPage)));
  // Newest first: page 1 is places total-perPage+1 … total. The LIMIT keeps the plan on the index: a
  // range of low places (any short history, or a long one's last page) matches every competitor's first
  // changes, and the planner, thinking it many rows, read them all in parallel with JIT (390 ms).
  const last = total - (page - 1) * perPage;
  const first = Math.max(1, last - perPage + 1);
  const columns = `column_name AS "column", note_version AS "noteVersion", value, previous_value AS "previousValue",
            actor_name AS "actorName", changed_at AS "changedAt"`;
  const { rows: versions } = await db.query<NoteVersion>(
    column === undefined
      ? `SELECT ${columns} FROM note_history
         WHERE competitor_id = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq DESC LIMIT $4`
      : `SELECT ${columns} FROM note_history
         WHERE competitor_id = $1 AND column_name = $4 AND note_version BETWEEN $2 AND $3
         ORDER BY note_version DESC LIMIT $5`,
    column === undefined
      ? [competitorId, first, last, perPage]
      : [competitorId, first, last, column, perPage],
  );
  return { versions, total, page };
}
