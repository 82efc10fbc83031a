import { jsonArrays } from '#infra/db/json-arrays.ts';
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
  /** Its place in the competitor's whole history: 1, 2, … in the order of the log. */
  seq: number;
}

/** What the history holds already: each note's latest version, and each competitor's last `seq`. */
export interface StoredHistory {
  /** By `competitorId:column`. */
  notes: ReadonlyMap<string, { version: number; value: string }>;
  /** By competitor id. */
  seqs: ReadonlyMap<string, number>;
}

const noteKey = (data: { competitorId: string; column: string }) => `${data.competitorId}:${data.column}`;

/**
 * Pure: history rows for a batch, each with the text it replaced (from the batch or from what is
 * stored) and its place in the competitor's history. A version the history holds already (a batch
 * applied again) gets no row, and so takes no place: the places stay 1..n without a gap.
 */
export function noteHistoryRows(events: readonly NoteUpdated[], stored: StoredHistory): NoteHistoryRow[] {
  const notes = new Map(stored.notes);
  const seqs = new Map(stored.seqs);
  const rows: NoteHistoryRow[] = [];
  for (const e of events) {
    const key = noteKey(e.data);
    const latest = notes.get(key);
    if (latest && e.data.noteVersion <= latest.version) continue;
    const seq = (seqs.get(e.data.competitorId) ?? 0) + 1;
    rows.push({
      competitorId: e.data.competitorId,
      column: e.data.column,
      noteVersion: e.data.noteVersion,
      value: e.data.value,
      previousValue: latest?.value ?? '',
      actorId: e.metadata.actor.id,
      actorName: e.metadata.actor.name,
      changedAt: e.metadata.at,
      position: e.position,
      seq,
    });
    notes.set(key, { version: e.data.noteVersion, value: e.data.value });
    seqs.set(e.data.competitorId, seq);
  }
  return rows;
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
    const keys = new Map(notes.map((e) => [noteKey(e.data), e.data]));
    // Per note of the batch, its latest stored version (one probe of the primary key each), and per
    // competitor its last place (one probe of the seq key each), whatever the planner thinks of the size.
    const { rows } = await db.query<{
      competitorId: string;
      key: string;
      version: number | null;
      value: string | null;
      seq: string | null;
    }>(
      `SELECT k.competitor_id::text AS "competitorId", k.competitor_id || ':' || k.column_name AS key,
              latest.note_version AS version, latest.value,
              (SELECT max(s.seq) FROM ${tables.note_history} s WHERE s.competitor_id = k.competitor_id) AS seq
       FROM unnest($1::uuid[], $2::text[]) AS k(competitor_id, column_name)
       LEFT JOIN LATERAL (
         SELECT h.note_version, h.value FROM ${tables.note_history} h
         WHERE h.competitor_id = k.competitor_id AND h.column_name = k.column_name
         ORDER BY h.note_version DESC LIMIT 1) AS latest ON true`,
      [[...keys.values()].map((k) => k.competitorId), [...keys.values()].map((k) => k.column)],
    );
    const stored: StoredHistory = {
      notes: new Map(
        rows.flatMap((r) =>
          r.version === null ? [] : [[r.key, { version: r.version, value: r.value ?? '' }]],
        ),
      ),
      seqs: new Map(rows.map((r) => [r.competitorId, Number(r.seq ?? 0)])),
    };
    const history = noteHistoryRows(notes, stored);
    const records = history.map((h) => ({
      competitor_id: h.competitorId,
      column_name: h.column,
      note_version: h.noteVersion,
      value: h.value,
      previous_value: h.previousValue,
      actor_id: h.actorId,
      actor_name: h.actorName,
      changed_at: h.changedAt,
      position: h.position,
      seq: h.seq,
    }));
    for (const json of jsonArrays(records)) {
      await db.query(
        `INSERT INTO ${tables.note_history}
           (competitor_id, column_name, note_version, value, previous_value, actor_id, actor_name, changed_at, position, seq)
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(competitor_id uuid, column_name text, note_version int, value text,
           previous_value text, actor_id text, actor_name text, changed_at timestamptz, position bigint, seq bigint)`,
        [json],
      );
    }
  },
});
