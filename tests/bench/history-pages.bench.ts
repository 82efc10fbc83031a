/**
 * A competitor's history pages (`/competitors/:id/history`, migration 034) for a competitor with a long
 * history: page 1, the middle page and the last page, of the whole history and of one note, at each
 * `--sizes` count of versions of that one competitor (plus 100,000 other competitors' first versions
 * around it). Measures `noteHistory` itself (count + page), p50 of `--reps` calls per case; cases take
 * turns within each round, and the ratio to the same view's page 1 is taken per round, then median and
 * spread over the rounds. Target (issue 13, deep pages): every page ≤ 5× page 1.
 * Baseline in the same run: what the history did before (count every version, then ORDER BY time with
 * OFFSET), last page, whole history.
 *
 *   npx tsx tests/bench/history-pages.bench.ts [--sizes=100000,1000000] [--rounds=3] [--reps=9]
 */
import { randomUUID } from 'node:crypto';
import type { Queryable } from '#infra/db/database.ts';
import { noteHistory } from '#projections/note-history/note-history.queries.ts';
import { knob, textKnob } from './support/knobs.ts';
import { reportMachine } from './support/machine.ts';
import { openScratchPostgres } from './support/services.ts';
import { medianSpread, p50Of, report } from './support/stats.ts';

const sizes = textKnob('sizes', '100000,1000000')
  .split(',')
  .map((s) => Number(s.trim()))
  .filter((n) => n > 0);
const rounds = knob('rounds', 3);
const reps = knob('reps', 9);
const others = knob('others', 100_000);
const PER_PAGE = 15;
const COLUMNS = ['strengths', 'weaknesses', 'pricing', 'general'];

/** `size` versions of one competitor, the four notes in turn, numbered as the projection numbers them. */
async function seedHistory(db: Queryable, competitorId: string, size: number): Promise<void> {
  await db.query(
    `INSERT INTO note_history (competitor_id, column_name, note_version, value, previous_value, actor_id,
       actor_name, changed_at, position, seq)
     SELECT $1, ($2::text[])[1 + i % 4], 1 + i / 4, repeat('v', 300), repeat('p', 300), 'bench', 'Bench',
       timestamptz '2024-01-01' + i * interval '1 minute', i + 1, i + 1
     FROM generate_series(0, $3::int - 1) AS i`,
    [competitorId, COLUMNS, size],
  );
  await db.query(
    `INSERT INTO note_history (competitor_id, column_name, note_version, value, previous_value, actor_id,
       actor_name, changed_at, position, seq)
     SELECT gen_random_uuid(), 'general', 1, 'other', '', 'bench', 'Bench', now(), $1::bigint + i, 1
     FROM generate_series(1, $2::int) AS i`,
    [size + 1, others],
  );
  await db.query('ANALYZE note_history');
}

/** The history's page as it was read before migration 034: every version counted, then OFFSET by time. */
async function offsetPage(db: Queryable, competitorId: string, page: number): Promise<number> {
  const { rows } = await db.query<{ total: number }>(
    'SELECT count(*)::int AS total FROM note_history WHERE competitor_id = $1',
    [competitorId],
  );
  const total = rows[0]?.total ?? 0;
  const shown = Math.max(1, Math.min(page, Math.ceil(total / PER_PAGE)));
  const { rows: versions } = await db.query(
    `SELECT column_name, note_version, value, previous_value, actor_name, changed_at FROM note_history
     WHERE competitor_id = $1 ORDER BY changed_at DESC, note_version DESC, position DESC LIMIT $2 OFFSET $3`,
    [competitorId, PER_PAGE, (shown - 1) * PER_PAGE],
  );
  return versions.length;
}

for (const size of sizes) {
  const db = await openScratchPostgres({ label: 'history_pages', poolSize: 2 });
  try {
    const competitorId = randomUUID();
    const seedStarted = Date.now();
    await seedHistory(db.pool, competitorId, size);
    console.log(`  ${size} versions seeded in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s`);
    const lastOf = async (column?: string) =>
      (await noteHistory(db.pool, competitorId, { column, page: 10_000_000, perPage: PER_PAGE })).page;
    const views = [
      { view: 'all', column: undefined, last: await lastOf() },
      { view: 'one-note', column: 'pricing', last: await lastOf('pricing') },
    ];
    const cases: { name: string; run: () => Promise<unknown> }[] = views.flatMap(({ view, column, last }) =>
      (
        [
          ['first', 1],
          ['middle', Math.ceil(last / 2)],
          ['last', last],
        ] as const
      ).map(([at, page]) => ({
        name: `${view}.${at}`,
        run: () => noteHistory(db.pool, competitorId, { column, page, perPage: PER_PAGE }),
      })),
    );
    const allLast = views[0]?.last ?? 1;
    cases.push({ name: 'before-034.all.last', run: () => offsetPage(db.pool, competitorId, allLast) });
    const byCase = new Map<string, number[]>(cases.map((c) => [c.name, []]));
    const ratios = new Map<string, number[]>();
    for (let round = 0; round < rounds; round++) {
      const measured = new Map<string, number>();
      // Turns rotate, so each case goes first in some round.
      for (let i = 0; i < cases.length; i++) {
        const c = cases[(i + round) % cases.length];
        if (!c) continue;
        const ms = await p50Of(c.run, reps);
        measured.set(c.name, ms);
        byCase.get(c.name)?.push(ms);
      }
      for (const [name, ms] of measured) {
        const view = name.startsWith('before-034') ? 'all' : name.split('.')[0];
        const first = measured.get(`${view}.first`) ?? Number.NaN;
        ratios.set(name, [...(ratios.get(name) ?? []), ms / first]);
      }
    }
    let worst = 0;
    for (const c of cases) {
      const ms = medianSpread(byCase.get(c.name) ?? []);
      const ratio = medianSpread(ratios.get(c.name) ?? []);
      if (!c.name.startsWith('before-034')) worst = Math.max(worst, ratio.median);
      report(`history-pages.${size}.${c.name}`, {
        rounds,
        reps,
        p50_ms: ms.median.toFixed(2),
        min_ms: ms.min.toFixed(2),
        max_ms: ms.max.toFixed(2),
        vs_page_1: ratio.median.toFixed(2),
        vs_page_1_min: ratio.min.toFixed(2),
        vs_page_1_max: ratio.max.toFixed(2),
      });
    }
    report(`history-pages.${size}.worst`, {
      vs_page_1: worst.toFixed(2),
      target_max: 5,
      met: worst <= 5 ? 'yes' : 'no',
    });
  } finally {
    await db.drop();
  }
}
reportMachine('history-pages');
