import type { Queryable } from '#infra/db/database.ts';

/** Query results recorded from a real database, to answer the same queries later from memory. */
interface Entry {
  sql: string;
  params: unknown[];
  rows: unknown[];
}

const keyOf = (sql: string, params: readonly unknown[] | undefined) =>
  `${sql}\u0000${JSON.stringify(params ?? [])}`;

/** Wraps a real Queryable and remembers every query and its rows. */
export function recordingQueryable(inner: Queryable): { db: Queryable; save(): string } {
  const entries: Entry[] = [];
  const db = {
    async query(sql: string, params?: unknown[]) {
      const result = await inner.query(sql, params);
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
 * every call). An unrecorded query fails loudly, so a changed query shows up as a 500, not a fake page.
 */
export function replayQueryable(saved: string): Queryable {
  const entries = JSON.parse(saved, (_key, value: unknown) =>
    value && typeof value === 'object' && '$date' in value ? new Date(String(value.$date)) : value,
  ) as Entry[];
  const answers = new Map(entries.map((e) => [keyOf(e.sql, e.params), e.rows]));
  return {
    async query(sql: string, params?: unknown[]) {
      const rows = answers.get(keyOf(sql, params));
      if (!rows) throw new Error(`replay: query not recorded: ${sql.slice(0, 120)}`);
      return { rows, rowCount: rows.length, command: 'SELECT', oid: 0, fields: [] };
    },
  } as unknown as Queryable;
}
