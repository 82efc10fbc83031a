import type { Queryable } from '#infra/db/database.ts';

/** Query results recorded from a real database, to answer the same queries later from memory. */
interface Entry {
  sql: Statement;
  params: unknown[];
  rows: unknown[];
}

type Statement = string | { text: string; values?: unknown[] };

/** A statement's text and values, whether given as text and values or prepared (infra/db/prepared.ts). */
const keyOf = (sql: Statement, params: readonly unknown[] | undefined) =>
  typeof sql === 'string'
    ? `${sql}\u0000${JSON.stringify(params ?? [])}`
    : `${sql.text}\u0000${JSON.stringify(sql.values ?? params ?? [])}`;

/** Wraps a real Queryable and remembers every query and its rows. */
export function recordingQueryable(inner: Queryable): { db: Queryable; save(): string } {
  const entries: Entry[] = [];
  const db = {
    async query(sql: Statement, params?: unknown[]) {
      const result = await inner.query(sql as string, params);
      entries.push({ sql, params: params ?? [], rows: result.rows });
      return result;
    },
  } as unknown as Queryable;
  // Dates (timestamptz columns) survive the trip through JSON tagged.
  const save = () =>
    JSON.stringify(entries, function (this: Record<string, unknown>, key, value: unknown) {
      const raw = this[key];
      return raw instanceof Date ? { $date: raw.toISOString() } : value;
    });
  return { db, save };
}

/**
 * Answers the recorded queries from memory, with the rows as pg returned them (the same objects on
 * every call); `answer`, asked first, may answer statements by their text. An unrecorded query fails
 * loudly, so a changed query shows up as a 500, not a fake page.
 */
export function replayQueryable(saved: string, answer?: (text: string) => unknown[] | undefined): Queryable {
  const entries = JSON.parse(saved, (_key, value: unknown) =>
    value && typeof value === 'object' && '$date' in value ? new Date(String(value.$date)) : value,
  ) as Entry[];
  const answers = new Map(entries.map((e) => [keyOf(e.sql, e.params), e.rows]));
  return {
    async query(sql: Statement, params?: unknown[]) {
      const rows = answer?.(typeof sql === 'string' ? sql : sql.text) ?? answers.get(keyOf(sql, params));
      if (!rows) {
        const text = typeof sql === 'string' ? sql : sql.text;
        throw new Error(`replay: query not recorded: ${text.slice(0, 120)}`);
      }
      return { rows, rowCount: rows.length, command: 'SELECT', oid: 0, fields: [] };
    },
  } as unknown as Queryable;
}
