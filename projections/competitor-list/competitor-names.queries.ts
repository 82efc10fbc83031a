import type { Queryable } from '#infra/db/database.ts';

/** The current names of the listed competitors that are live (a deleted one has none). */
export async function competitorNames(db: Queryable, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; name: string }>(
    'SELECT id, name FROM competitor_list WHERE id = ANY($1::uuid[])',
    [ids],
  );
  return new Map(rows.map((r) => [r.id, r.name]));
}
