import type { CompetitorEvent } from '#events/competitor/events.ts';
import type { Recorded } from '#events/envelope.ts';
import { defineProjection } from '../projection.ts';

type NoteUpdated = Extract<Recorded<CompetitorEvent>, { type: 'CompetitorNoteUpdated' }>;

export interface NoteHistoryRow {
  competitorId: string;
  column: string;
  noteVersion: number;
  value: string;
  previousValue: string;
  actorId: string;
  actorName: string;
  changedAt: string;
  position: number;
}

/** Pure: history rows for a batch, each with the text it replaced (from the batch or from `previous`). */
export function noteHistoryRows(
  events: readonly NoteUpdated[],
  previous: ReadonlyMap<string, string>,
): NoteHistoryRow[] {
  const latest = new Map(previous);
  return events.map((e) => {
    const key = `${e.data.competitorId}:${e.data.column}`;
    const row: NoteHistoryRow = {
      competitorId: e.data.competitorId,
      column: e.data.column,
      noteVersion: e.data.noteVersion,
      value: e.data.value,
      previousValue: latest.get(key) ?? '',
      actorId: e.metadata.actor.id,
      actorName: e.metadata.actor.name,
      changedAt: e.metadata.at,
      position: e.position,
    };
    latest.set(key, e.data.value);
    return row;
  });
}

/**
 * Every note version, for /competitors/:id/history.
 * Version 2: text composed (NFC) as events are now read, so names and notes typed with combining
 * accents are found by a search typed the other way (decision 0024).
 */
export const noteHistoryProjection = defineProjection({
  name: 'note-history',
  version: 2,
  tables: ['note_history'],
  handles: ['CompetitorNoteUpdated'],

  async apply(db, events, tables) {
    const notes = events.filter((e) => e.type === 'CompetitorNoteUpdated') as NoteUpdated[];
    if (notes.length === 0) return;
    // Only a note's first change in this batch may need the text before it, and version 1 has none.
    const firsts = new Map<string, NoteUpdated['data']>();
    for (const e of notes) {
      const key = `${e.data.competitorId}:${e.data.column}`;
      if (!firsts.has(key)) firsts.set(key, e.data);
    }
    const lookups = [...firsts.values()].filter((d) => d.noteVersion > 1);
    // One index probe per note (LATERAL … LIMIT 1), whatever the planner thinks of the table's size.
    const { rows } = await db.query<{ key: string; value: string | null }>(
      `SELECT k.competitor_id || ':' || k.column_name AS key,
              (SELECT h.value FROM ${tables.note_history} h
               WHERE h.competitor_id = k.competitor_id AND h.column_name = k.column_name
               ORDER BY h.note_version DESC LIMIT 1) AS value
       FROM unnest($1::uuid[], $2::text[]) AS k(competitor_id, column_name)`,
      [lookups.map((k) => k.competitorId), lookups.map((k) => k.column)],
    );
    const history = noteHistoryRows(notes, new Map(rows.map((r) => [r.key, r.value ?? ''])));
    await db.query(
      `INSERT INTO ${tables.note_history}
         (competitor_id, column_name, note_version, value, previous_value, actor_id, actor_name, changed_at, position)
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(competitor_id uuid, column_name text, note_version int, value text,
         previous_value text, actor_id text, actor_name text, changed_at timestamptz, position bigint)
       ON CONFLICT DO NOTHING`,
      [
        JSON.stringify(
          history.map((h) => ({
            competitor_id: h.competitorId,
            column_name: h.column,
            note_version: h.noteVersion,
            value: h.value,
            previous_value: h.previousValue,
            actor_id: h.actorId,
            actor_name: h.actorName,
            changed_at: h.changedAt,
            position: h.position,
          })),
        ),
      ],
    );
  },
});
