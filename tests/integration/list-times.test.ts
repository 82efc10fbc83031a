import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findCompetitor, listCompetitors } from '#projections/competitor-list/competitor-list.queries.ts';
import { loadRows } from '#projections/competitor-list/competitor-list.writer.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';

const ROWS = 200;
const tables = { competitor_list: 'competitor_list', competitor_list_segments: 'competitor_list_segments' };

/**
 * The list's pages read `created_at` and `updated_at` as ISO text written by the database
 * (`isoTimeColumns`); everything else reads them as Dates (`fromDbRow`, `toISOString`). Both must give
 * the same text for any timestamp, to the microsecond (milliseconds cut, not rounded), and the `updated`
 * sort must still sort by the timestamp, not by its text.
 */
describe.each(databaseBackends)('competitor list times as ISO text (%s)', (backend) => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase(backend);
    // Microseconds that round up (…999, …500) and down, before 2000, around a DST change, and ties to
    // the millisecond that differ in microseconds (the updated sort must keep them in time order).
    await db.pool.query(
      `INSERT INTO competitor_list (id, name, segment_id, segment_name, threat, rank, version, created_at, updated_at)
       SELECT gen_random_uuid(), 'Rival ' || i, 's', 'Segment', 'low', i, 1,
              timestamptz '1999-12-31 23:59:59.999999+00' + i * interval '37 days 1 hour 0.000457 seconds',
              timestamptz '2026-03-29 00:59:59.9995+00' + (i % 7) * interval '0.000999 seconds'
                - (i % 3) * interval '0.000001 seconds'
       FROM generate_series(1, $1::int) AS i`,
      [ROWS],
    );
  }, 60_000);
  afterAll(() => db?.drop());

  it("gives each row's times as toISOString gives them from pg's Dates, on every sort", async () => {
    for (const sort of [undefined, { column: 'updated', direction: 'desc' } as const]) {
      const page = await listCompetitors(db.pool, { search: '', sort, page: 1, perPage: 100 });
      const expected = new Map(
        await loadRows(
          db.pool,
          tables,
          page.rows.map((r) => r.id),
        ),
      );
      expect(page.rows).toHaveLength(100);
      for (const row of page.rows) {
        expect([row.createdAt, row.updatedAt]).toEqual([
          expected.get(row.id)?.createdAt,
          expected.get(row.id)?.updatedAt,
        ]);
      }
      const first = page.rows[0];
      expect(first && (await findCompetitor(db.pool, first.id))).toEqual(first);
    }
  });

  it('sorts by last update to the microsecond, not by the text of the time', async () => {
    const page = await listCompetitors(db.pool, {
      search: '',
      sort: { column: 'updated', direction: 'asc' },
      page: 1,
      perPage: 100,
    });
    const { rows } = await db.pool.query<{ id: string }>(
      'SELECT id FROM competitor_list ORDER BY updated_at ASC, id ASC LIMIT 100',
    );
    expect(page.rows.map((r) => r.id)).toEqual(rows.map((r) => r.id));
  });
});
