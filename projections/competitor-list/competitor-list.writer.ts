import { jsonArrays } from '#infra/db/json-arrays.ts';
import type { Queryable } from '#infra/db/database.ts';
import type { TableNames } from '../projection.ts';
import type { CompetitorRow } from './competitor-row.ts';

type Tables = TableNames<'competitor_list' | 'competitor_list_segments'>;

interface DbRow {
  id: string;
  name: string;
  website: string | null;
  segment_id: string;
  segment_name: string;
  threat: CompetitorRow['threat'];
  headquarters: string | null;
  rank: number;
  strengths: string;
  weaknesses: string;
  pricing: string;
  general: string;
  note_meta: CompetitorRow['noteMeta'];
  version: number;
  created_at: Date;
  updated_at: Date;
}

const columns =
  'id, name, website, segment_id, segment_name, threat, headquarters, rank, strengths, weaknesses, pricing, general, note_meta, version, created_at, updated_at';

const recordType = `id uuid, name text, website text, segment_id text, segment_name text, threat text,
  headquarters text, rank int, strengths text, weaknesses text, pricing text, general text, note_meta jsonb,
  version int, created_at timestamptz, updated_at timestamptz`;

/** A row as the list's pages read it (competitor-list.queries.ts): its times already ISO text. */
export type ListDbRow = Omit<DbRow, 'created_at' | 'updated_at'> & {
  created_iso: string;
  updated_iso: string;
};

const rowOf = (
  r: Omit<DbRow, 'created_at' | 'updated_at'>,
  createdAt: string,
  updatedAt: string,
): CompetitorRow => ({
  id: r.id,
  name: r.name,
  website: r.website,
  segmentId: r.segment_id,
  segmentName: r.segment_name,
  threat: r.threat,
  headquarters: r.headquarters,
  rank: r.rank,
  notes: { strengths: r.strengths, weaknesses: r.weaknesses, pricing: r.pricing, general: r.general },
  noteMeta: r.note_meta,
  version: r.version,
  createdAt,
  updatedAt,
});

export const fromDbRow = (r: DbRow): CompetitorRow =>
  rowOf(r, r.created_at.toISOString(), r.updated_at.toISOString());

export const fromListRow = (r: ListDbRow): CompetitorRow => rowOf(r, r.created_iso, r.updated_iso);

/**
 * `created_at` and `updated_at` as the text `Date#toISOString` writes (UTC, to the millisecond, cut not
 * rounded, as pg's Date is), written by the database: read as Dates, pg parses each and the row mapping
 * writes it back as text, about 1 µs a value and 30 values a page. Named apart from the columns, so an
 * `ORDER BY updated_at` in the same statement still sorts by the timestamp (to the microsecond).
 */
export const isoTimeColumns = ['created', 'updated']
  .map((c) => `to_char(${c}_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ${c}_iso`)
  .join(', ');

const toDbRecord = (r: CompetitorRow) => ({
  id: r.id,
  name: r.name,
  website: r.website,
  segment_id: r.segmentId,
  segment_name: r.segmentName,
  threat: r.threat,
  headquarters: r.headquarters,
  rank: r.rank,
  ...r.notes,
  note_meta: r.noteMeta,
  version: r.version,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});

export async function loadRows(
  db: Queryable,
  tables: Tables,
  ids: string[],
): Promise<[string, CompetitorRow][]> {
  const { rows } = await db.query<DbRow>(
    `SELECT ${columns} FROM ${tables.competitor_list} WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  return rows.map((r) => [r.id, fromDbRow(r)]);
}

/** One statement for any number of rows (a few when they are very large: `jsonArrays`). */
export async function upsertRows(db: Queryable, tables: Tables, rows: CompetitorRow[]): Promise<void> {
  if (rows.length === 0) return;
  const updates = columns
    .split(', ')
    .filter((c) => c !== 'id')
    .map((c) => `${c} = EXCLUDED.${c}`)
    .join(', ');
  for (const json of jsonArrays(rows.map(toDbRecord))) {
    await db.query(
      `INSERT INTO ${tables.competitor_list} (${columns})
       SELECT ${columns} FROM jsonb_to_recordset($1::jsonb) AS x(${recordType})
       ON CONFLICT (id) DO UPDATE SET ${updates}`,
      [json],
    );
  }
}

/**
 * Deletes rows and closes the gaps their ranks leave: each remaining rank drops by the number of
 * removed ranks below it, in one statement.
 */
export async function removeRanks(
  db: Queryable,
  tables: Tables,
  ids: string[],
  ranks: number[],
): Promise<void> {
  if (ids.length > 0) {
    await db.query(`DELETE FROM ${tables.competitor_list} WHERE id = ANY($1::uuid[])`, [ids]);
  }
  if (ranks.length === 0) return;
  await db.query(
    `UPDATE ${tables.competitor_list} c
     SET rank = c.rank - (SELECT count(*) FROM unnest($1::int[]) AS r(rank) WHERE r.rank < c.rank)
     WHERE c.rank > (SELECT min(r) FROM unnest($1::int[]) AS r)`,
    [ranks],
  );
}
