/**
 * Deep pages (issue 13, item 1): for every sort of the three data tables (competitors, audit log, users),
 * page 1, the middle page and the last page, with and without a search, at 100k and 1M rows. Measures the
 * list queries themselves (`listCompetitors`, `listAudit`, `listUsers` on a 2-connection pool, one request
 * at a time), p50 of `--reps` calls per case; cases take turns within each round (order rotating) and the
 * ratio to the same sort's page 1 is taken per round, then median and spread over the rounds.
 * Target: every page ≤ 5× page 1's p50. For comparison, the OFFSET scan the name sort used before
 * (last page) is measured once per round.
 *
 * Data sets, one dedicated database per size, seeded once and reused (seeding time reported):
 *  - 100k: `seed --competitors 100000` (the bulk path: the same events the commands write, then
 *    projected: 100k competitors, ~580k audit rows);
 *  - 1M: a copy of the 100k database whose read-model rows are replicated in SQL to 1M competitors and
 *    1.16M audit rows (projecting 5.8M events through the bulk path takes over an hour on this machine);
 *  - users: synthetic rows in the user list (read model only) up to the size; 5% carry the search term.
 *
 * Seeding holds long transactions (the 1M copy, index builds, VACUUM): on a Postgres shared with other
 * work, every projection there waits for them (commit-safe reading stops at the oldest open transaction),
 * so point `--base-url` at a server of its own, e.g. one started with `initdb` + `pg_ctl -o '-p 55432'`.
 *
 *   npx tsx tests/bench/deep-pages.bench.ts [--sizes=100000,1000000] [--rounds=3] [--reps=15]
 *     [--base-url=postgres://postgres@127.0.0.1:5432]
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { typeParsers } from '#infra/db/database.ts';
import { migrate } from '#infra/db/migrate.ts';
import { listAudit, type AuditSortColumn } from '#projections/audit-log/audit-log.queries.ts';
import {
  listCompetitors,
  type CompetitorSortColumn,
} from '#projections/competitor-list/competitor-list.queries.ts';
import { listUsers, type UserSortColumn } from '#projections/user-list/user-list.queries.ts';
import { createSearchPageCache, type SearchPageCache } from '#projections/search-pages.ts';
import { knob, textKnob } from './support/knobs.ts';
import { reportMachine } from './support/machine.ts';
import { repoRoot } from './support/services.ts';
import { medianSpread, p50Of, report } from './support/stats.ts';

const sizes = textKnob('sizes', '100000,1000000')
  .split(',')
  .map((s) => Number(s.trim()))
  .filter((n) => n > 0);
const rounds = knob('rounds', 3);
const reps = knob('reps', 15);
const baseUrl = textKnob('base-url', 'postgres://postgres@127.0.0.1:5432');
const PER_PAGE = 15;
const SEED_SIZE = 100_000;

const urlOf = (database: string) => `${baseUrl}/${database}`;
const dbName = (size: number) => (size === SEED_SIZE ? 'rivals_deep_100k' : `rivals_deep_${size / 1000}k`);

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: urlOf('postgres') });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function exists(database: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: urlOf('postgres') });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    return rows.length > 0;
  } finally {
    await client.end();
  }
}

async function countOf(url: string, table: string): Promise<number> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
    return rows[0]?.n ?? 0;
  } catch {
    return 0;
  } finally {
    await pool.end();
  }
}

/** The 100k data set through the CLI's bulk seeding path (then projected). */
async function seedBase(): Promise<number> {
  const database = dbName(SEED_SIZE);
  if (!(await exists(database))) await adminQuery(`CREATE DATABASE ${database}`);
  const started = Date.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'web/cli.server.ts', 'seed', '--competitors', String(SEED_SIZE), '--seed', '7'],
      {
        cwd: repoRoot,
        env: {
          ...process.env,
          DATABASE_URL: urlOf(database),
          SESSION_SECRET: randomBytes(32).toString('hex'),
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`seed exited with ${code}`))));
  });
  return (Date.now() - started) / 1000;
}

/** A bigger data set: a copy of the 100k one, its read-model rows replicated in SQL. */
async function replicate(size: number): Promise<number> {
  const database = dbName(size);
  const started = Date.now();
  await adminQuery(`DROP DATABASE IF EXISTS ${database}`);
  await adminQuery(`CREATE DATABASE ${database} TEMPLATE ${dbName(SEED_SIZE)}`);
  const pool = new pg.Pool({ connectionString: urlOf(database), max: 1, types: typeParsers });
  try {
    const copies = Math.ceil(size / SEED_SIZE) - 1;
    // Bulk loads build the trigram indexes afterwards (far faster than row by row).
    await pool.query('DROP INDEX competitor_list_search, audit_log_search');
    await pool.query(
      `INSERT INTO competitor_list (id, name, website, segment_id, segment_name, threat, headquarters, rank,
         strengths, weaknesses, pricing, general, note_meta, version, created_at, updated_at)
       SELECT gen_random_uuid(), name || ' ' || g, website, segment_id, segment_name, threat, headquarters,
         rank + g * ${SEED_SIZE}, strengths, weaknesses, pricing, general, note_meta, version, created_at,
         updated_at + g * interval '1 second'
       FROM competitor_list, generate_series(1, ${copies}) AS g`,
    );
    const { rows } = await pool.query<{ n: number }>('SELECT max(position) AS n FROM audit_log');
    await pool.query(
      `INSERT INTO audit_log (position, at, actor_id, actor_name, type, stream, competitor_id, competitor_name, summary)
       SELECT position + ${rows[0]?.n ?? 0}, at + interval '1 day', actor_id, actor_name, type, stream, competitor_id,
         competitor_name, summary FROM audit_log`,
    );
    await pool.query(
      'CREATE INDEX competitor_list_search ON competitor_list USING gin (search_text gin_trgm_ops)',
    );
    await pool.query('CREATE INDEX audit_log_search ON audit_log USING gin (search_text gin_trgm_ops)');
  } finally {
    await pool.end();
  }
  return (Date.now() - started) / 1000;
}

/** Synthetic users up to `size` (the user list is a read model; 5% carry "forge" in their name). */
async function topUpUsers(pool: pg.Pool, size: number): Promise<void> {
  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM user_list');
  const have = rows[0]?.n ?? 0;
  if (have >= size) return;
  await pool.query(
    `INSERT INTO user_list (id, email, display_name, role, created_at, updated_at)
     SELECT gen_random_uuid(), 'person' || i || '@bench.example', 'Person ' || (i % 5000) ||
       CASE WHEN i % 20 = 0 THEN ' Forge' ELSE '' END, (ARRAY['admin', 'editor', 'viewer'])[1 + i % 3],
       timestamptz '2025-01-01' + (i % 100000) * interval '1 minute', now()
     FROM generate_series($1::int + 1, $2::int) AS i`,
    [have, size],
  );
}

type Lister = (page: number, pages: SearchPageCache) => Promise<{ page: number }>;
interface Case {
  table: string;
  sort: string;
  search: string;
  /** `…-cold`: a search's deep page on its first visit (its matches not yet kept). */
  at: 'first' | 'middle' | 'last' | 'middle-cold' | 'last-cold';
  run: () => Promise<unknown>;
}

/**
 * Every case. A search's deep pages are measured as the app serves them (the process's search page
 * cache: repeated visits and next pages read 15 rows by id while the table is unchanged) and cold (a new
 * cache per call: what the first visit of a deep page of that search costs).
 */
async function casesFor(pool: pg.Pool): Promise<Case[]> {
  const cases: Case[] = [];
  const searchPages = createSearchPageCache();
  const add = async (table: string, sort: string, search: string, list: Lister) => {
    // The last page as the table says it is (a page far past the end becomes the last page).
    const last = (await list(10_000_000, searchPages)).page;
    const pages = { first: 1, middle: Math.max(1, Math.ceil(last / 2)), last } as const;
    for (const at of ['first', 'middle', 'last'] as const) {
      cases.push({ table, sort, search, at, run: () => list(pages[at], searchPages) });
    }
    if (!search) return;
    cases.push({
      table,
      sort,
      search,
      at: 'middle-cold',
      run: () => list(pages.middle, createSearchPageCache()),
    });
    cases.push({
      table,
      sort,
      search,
      at: 'last-cold',
      run: () => list(pages.last, createSearchPageCache()),
    });
  };
  const competitorSorts: CompetitorSortColumn[] = ['rank', 'name', 'segment', 'threat', 'updated'];
  const auditSorts: AuditSortColumn[] = ['time', 'actor', 'type', 'competitor'];
  const userSorts: UserSortColumn[] = ['name', 'email', 'role', 'created'];
  for (const search of ['', 'forge']) {
    for (const column of competitorSorts) {
      await add('competitors', column, search, (page, pages) =>
        listCompetitors(pool, { search, sort: { column, direction: 'asc' }, page, perPage: PER_PAGE }, pages),
      );
    }
    for (const column of userSorts) {
      await add('users', column, search, (page, pages) =>
        listUsers(pool, { search, sort: { column, direction: 'asc' }, page, perPage: PER_PAGE }, pages),
      );
    }
  }
  for (const search of ['', 'deals']) {
    for (const column of auditSorts) {
      await add('audit', column, search, (page, pages) =>
        listAudit(pool, { search, sort: { column, direction: 'asc' }, page, perPage: PER_PAGE }, pages),
      );
    }
  }
  return cases;
}

const keyOf = (c: Case) => `${c.table}.${c.sort}${c.search ? `.search-${c.search}` : ''}`;

for (const size of sizes) {
  const database = dbName(size);
  const url = urlOf(database);
  let seeded = 'reused';
  if ((await countOf(url, 'competitor_list')) < size) {
    if (size !== SEED_SIZE && (await countOf(urlOf(dbName(SEED_SIZE)), 'competitor_list')) < SEED_SIZE) {
      report(`deep-pages.seed.${SEED_SIZE}`, { seconds: await seedBase() });
    }
    const seconds = size === SEED_SIZE ? await seedBase() : await replicate(size);
    seeded = `${seconds.toFixed(0)} s`;
  }
  const pool = new pg.Pool({ connectionString: url, max: 2, types: typeParsers });
  try {
    const migrated = Date.now();
    const applied = await migrate(pool);
    await topUpUsers(pool, size);
    if (applied.length > 0 || seeded !== 'reused') await pool.query('VACUUM ANALYZE');
    const counts = {
      competitors: await countOf(url, 'competitor_list'),
      audit: await countOf(url, 'audit_log'),
      users: await countOf(url, 'user_list'),
    };
    report(`deep-pages.${size}.dataset`, {
      database,
      ...counts,
      seeding: seeded,
      migrate_and_users_s: (Date.now() - migrated) / 1000,
    });

    const cases = await casesFor(pool);
    const p50s = new Map<Case, number[]>(cases.map((c) => [c, []]));
    const offsetBaseline: number[] = [];
    const started = Date.now();
    for (const c of cases) await c.run(); // warm-up
    for (let round = 0; round < rounds; round++) {
      const order = cases.map((_, i) => cases[(i + round * 7) % cases.length] as Case);
      for (const c of order) p50s.get(c)?.push(await p50Of(() => c.run(), reps));
      // Before: the name sort's last page as an OFFSET scan (what every non-rank sort did).
      offsetBaseline.push(
        await p50Of(
          () =>
            pool.query(
              `SELECT * FROM competitor_list ORDER BY lower(name), id LIMIT ${PER_PAGE}
               OFFSET ${Math.max(0, counts.competitors - PER_PAGE)}`,
            ),
          3,
        ),
      );
      process.stdout.write(
        `  ${size}: round ${round + 1}/${rounds} done (${((Date.now() - started) / 1000).toFixed(0)} s)\n`,
      );
    }
    const worst: { ratio: number; name: string } = { ratio: 0, name: '' };
    const worstCold: { ratio: number; name: string } = { ratio: 0, name: '' };
    for (const c of cases) {
      const first = cases.find((o) => keyOf(o) === keyOf(c) && o.at === 'first') as Case;
      const mine = p50s.get(c) ?? [];
      const base = p50s.get(first) ?? [];
      const ratio = medianSpread(mine.map((v, i) => v / (base[i] ?? v)));
      const p50 = medianSpread(mine);
      const tally = c.at.endsWith('-cold') ? worstCold : worst;
      if (ratio.median > tally.ratio)
        Object.assign(tally, { ratio: ratio.median, name: `${keyOf(c)}.${c.at}` });
      report(`deep-pages.${size}.${keyOf(c)}.${c.at}`, {
        p50_ms: p50.median,
        p50_min: p50.min,
        p50_max: p50.max,
        vs_page_1: ratio.median,
        vs_page_1_min: ratio.min,
        vs_page_1_max: ratio.max,
        met: ratio.median <= 5 ? 'yes' : 'no',
      });
    }
    const offset = medianSpread(offsetBaseline);
    const namePage1 = medianSpread(
      p50s.get(cases.find((c) => keyOf(c) === 'competitors.name' && c.at === 'first') as Case) ?? [],
    );
    report(`deep-pages.${size}.before.offset-name-last`, {
      p50_ms: offset.median,
      p50_min: offset.min,
      p50_max: offset.max,
      vs_indexed_page_1: offset.median / namePage1.median,
    });
    report(`deep-pages.${size}.worst`, { case: worst.name, vs_page_1: worst.ratio, target_max: 5 });
    report(`deep-pages.${size}.worst-first-visit`, {
      case: worstCold.name,
      vs_page_1: worstCold.ratio,
      target_max: 5,
    });
  } finally {
    await pool.end();
  }
}
reportMachine('deep-pages');
