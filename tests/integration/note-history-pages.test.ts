import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '#infra/db/migrate.ts';
import type { NoteColumn } from '#events/competitor/fields.ts';
import { noteHistoryProjection } from '#projections/note-history/note-history.projection.ts';
import { noteHistory } from '#projections/note-history/note-history.queries.ts';
import type { ProjectionRunner } from '#projections/runner.ts';
import type { CommandRouter } from '#services/command-router.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { addCompetitorCommand, envelope, writeSide } from '#tests/support/runtime-pieces.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';

/**
 * A competitor's history pages by index (migration 034): every page, of the whole history and of each
 * note, for every page size, equals what `ORDER BY position DESC LIMIT … OFFSET …` gives, before and
 * after the history grows between requests; past the end is the last page.
 */
const columns: NoteColumn[] = ['pricing', 'strengths', 'general'];
/** Which column each change goes to, in turn: uneven, and interleaved. */
const spread = [0, 1, 0, 2, 1, 2, 0];

describe.each(databaseBackends)('note history pages on %s', (backend) => {
  let db: TestDatabase;
  let route: CommandRouter;
  let runner: ProjectionRunner;
  const acme = addCompetitorCommand('Acme history pages');
  const globex = addCompetitorCommand('Globex history pages');
  const acmeId = acme.payload.competitorId;

  beforeAll(async () => {
    db = await createTestDatabase(backend);
    ({ route, runner } = await writeSide(db));
    for (const command of [acme, globex]) expect((await route(envelope(command))).status).toBe('accepted');
    await change(acmeId, 60);
    await change(globex.payload.competitorId, 7);
  });
  afterAll(async () => db?.drop());

  /** `count` note changes of the competitor, spread unevenly over the columns; then projected. */
  async function change(competitorId: string, count: number) {
    for (let i = 0; i < count; i++) {
      const column = columns[spread[i % spread.length] as number] as NoteColumn;
      const command = {
        type: 'UpdateCompetitorNote' as const,
        payload: { competitorId, column, value: `${column} ${i} ${Date.now()}` },
      };
      expect((await route(envelope(command))).status).toBe('accepted');
    }
    await runner.catchUp(noteHistoryProjection);
  }

  /** What the history page should be: the rows in the order of the log, offset and limited. */
  async function expected(column: NoteColumn | undefined, page: number, perPage: number) {
    const { rows } = await db.pool.query<{ total: number }>(
      `SELECT count(*)::int AS total FROM note_history
       WHERE competitor_id = $1 AND ($2::text IS NULL OR column_name = $2)`,
      [acmeId, column ?? null],
    );
    const total = rows[0]?.total ?? 0;
    const shown = Math.max(1, Math.min(page, Math.ceil(total / perPage)));
    const { rows: versions } = await db.pool.query<{ column: string; noteVersion: number }>(
      `SELECT column_name AS "column", note_version AS "noteVersion" FROM note_history
       WHERE competitor_id = $1 AND ($2::text IS NULL OR column_name = $2)
       ORDER BY position DESC LIMIT $3 OFFSET $4`,
      [acmeId, column ?? null, perPage, (shown - 1) * perPage],
    );
    return { versions, total, page: shown };
  }

  async function everyPageMatches() {
    for (const column of [undefined, ...columns]) {
      for (const perPage of [10, 15]) {
        const { total } = await expected(column, 1, perPage);
        expect(total).toBeGreaterThan(perPage);
        for (let page = 1; page <= Math.ceil(total / perPage) + 1; page++) {
          const got = await noteHistory(db.pool, acmeId, { column, page, perPage });
          expect(
            {
              versions: got.versions.map((v) => ({ column: v.column, noteVersion: v.noteVersion })),
              total: got.total,
              page: got.page,
            },
            `${column ?? 'all'} page ${page} of ${perPage}`,
          ).toEqual(await expected(column, page, perPage));
        }
      }
    }
  }

  it('every page of the whole history and of each note is what ORDER BY … OFFSET gives, past the end too', async () => {
    await everyPageMatches();
  });

  it('after the history grew between requests, every page still is', async () => {
    await change(acmeId, 9);
    await everyPageMatches();
  });

  it('changes accepted on instances whose clocks disagree are listed in the order they were made', async () => {
    const skewed = addCompetitorCommand('Skewed clocks');
    const id = skewed.payload.competitorId;
    expect((await route(envelope(skewed))).status).toBe('accepted');
    // The second change is accepted by an instance whose clock is a minute behind the first's.
    const now = Date.now();
    for (const [value, at] of [
      ['first', now],
      ['second', now - 60_000],
      ['third', now + 1_000],
    ] as const) {
      const command = {
        type: 'UpdateCompetitorNote' as const,
        payload: { competitorId: id, column: 'pricing' as const, value },
      };
      expect((await route(envelope(command, { at: new Date(at).toISOString() }))).status).toBe('accepted');
    }
    await runner.catchUp(noteHistoryProjection);
    for (const column of [undefined, 'pricing'] as const) {
      const { versions } = await noteHistory(db.pool, id, { column, page: 1, perPage: 15 });
      // Newest first, each replacing the one listed after it.
      expect(versions.map((v) => [v.value, v.previousValue])).toEqual([
        ['third', 'second'],
        ['second', 'first'],
        ['first', ''],
      ]);
    }
  });

  it('a competitor without history has one empty page', async () => {
    const none = addCompetitorCommand('No history');
    expect((await route(envelope(none))).status).toBe('accepted');
    expect(await noteHistory(db.pool, none.payload.competitorId, { page: 3, perPage: 15 })).toEqual({
      versions: [],
      total: 0,
      page: 1,
    });
  });

  it('an upgrade numbers the history it finds in the order of the log, each competitor on its own (migration 034)', async () => {
    const old = await createTestDatabase(backend, { migrate: false });
    try {
      const all = await loadMigrations();
      await migrate(old.pool, { migrations: all.filter((m) => m.id < '034') });
      const [a, b] = [randomUUID(), randomUUID()];
      // Positions out of the rows' insertion order, two competitors interleaved.
      for (const [competitor, column, version, position] of [
        [a, 'pricing', 2, 30],
        [b, 'pricing', 1, 5],
        [a, 'general', 1, 20],
        [a, 'pricing', 1, 10],
        [b, 'general', 1, 40],
      ] as const) {
        await old.pool.query(
          `INSERT INTO note_history (competitor_id, column_name, note_version, value, previous_value, actor_id,
             actor_name, changed_at, position) VALUES ($1, $2, $3, 'v', '', 'u', 'U', now(), $4)`,
          [competitor, column, version, position],
        );
      }
      await migrate(old.pool, { migrations: all });
      const { rows } = await old.pool.query<{ competitor: string; position: number; seq: number }>(
        `SELECT competitor_id::text AS competitor, position::int, seq::int FROM note_history
         ORDER BY competitor_id, seq`,
      );
      expect(rows.filter((r) => r.competitor === a).map((r) => [r.position, r.seq])).toEqual([
        [10, 1],
        [20, 2],
        [30, 3],
      ]);
      expect(rows.filter((r) => r.competitor === b).map((r) => [r.position, r.seq])).toEqual([
        [5, 1],
        [40, 2],
      ]);
    } finally {
      await old.drop();
    }
  });
});
