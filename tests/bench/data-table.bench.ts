/**
 * The data table's XHR refresh (GET /competitors with `X-Requested-With: XMLHttpRequest`, signed in,
 * 15 rows) on real Postgres holding 1,000,000 competitors, with autocannon (10 keep-alive connections):
 *
 *  - page-1: page 1, default sort (rank);
 *  - deep-page: page 10,000, default sort;
 *  - deep-page-name-sort: page 10,000 sorted by name (for information: an OFFSET scan, no target);
 *  - search-5pct: a search matching about 5% of the rows (the fraction is measured and printed);
 *  - search-none: a search matching nothing;
 *  - no-db (baseline): node:http + renderToString of the same XHR fragment (`CompetitorListFragment`)
 *    from page 1's rows, fetched once; no framework, no session, no database.
 *
 * Cases take turns within each round (the order rotates), so a busy moment hurts them alike; ratios are
 * taken per round, then their median and spread printed. Targets: page-1 ≥ 40% of no-db's rate; the
 * search cases ≥ 25% of page-1's rate; deep-page p50 ≤ 5× page-1's p50. Also: bytes of the XHR answer
 * vs the full page.
 *
 * The database is used read-only (sign-in adds a session; the first start on it adds the admin):
 *
 *   BENCH_1M_DATABASE_URL=postgres://postgres@127.0.0.1:5432/rivals_bench_1m \
 *     npx tsx tests/bench/data-table.bench.ts [--rounds=3] [--duration=5] [--warmup=2] [--connections=10]
 *     [--search-term=forge] [--empty-term=zzqxv] [--deep-page=10000] [--min-rows=1000000]
 *     [--catchup-wait=180] [--cases=no-db,page-1,deep-page,deep-page-name-sort,search-5pct,search-none]
 *     [--admin-email=bench-admin@rivals.test] [--admin-password=a-long-bench-password]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { listCompetitors } from '#projections/competitor-list/competitor-list.queries.ts';
import { containsPattern, foldedSearch } from '#projections/search-pages.ts';
import { DEFAULT_PER_PAGE } from '#web/components/data-table/table-state.ts';
import { caseKnob, knob, textKnob } from './support/knobs.ts';
import { loadTest, type LoadResult } from './support/load.ts';
import { reportMachine } from './support/machine.ts';
import {
  countRows,
  processCpuMs,
  signIn,
  spawnLocal,
  waitForStatus,
  type ServerProcess,
} from './support/server-process.ts';
import { ensureAssets, sleep } from './support/services.ts';
import { medianSpread, report } from './support/stats.ts';

const databaseUrl = process.env.BENCH_1M_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/rivals_bench_1m';
const rounds = knob('rounds', 3);
const seconds = knob('duration', 5);
const warmupSeconds = knob('warmup', 2);
const connections = knob('connections', 10);
const searchTerm = textKnob('search-term', 'forge');
const emptyTerm = textKnob('empty-term', 'zzqxv');
const deepPage = knob('deep-page', 10_000);
const minRows = knob('min-rows', 1_000_000);
const catchupWaitSeconds = knob('catchup-wait', 180);
const logLevel = textKnob('log-level', 'warn');
const ADMIN_EMAIL = textKnob('admin-email', 'bench-admin@rivals.test');
const ADMIN_PASSWORD = textKnob('admin-password', 'a-long-bench-password');

const allCases = [
  'no-db',
  'page-1',
  'deep-page',
  'deep-page-name-sort',
  'search-5pct',
  'search-none',
] as const;
type Case = (typeof allCases)[number];
const cases = caseKnob('cases', allCases);

const q = (params: Record<string, string | number>) =>
  `/competitors?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString()}`;
const paths: Record<Case, string> = {
  'no-db': '/competitors',
  'page-1': '/competitors',
  'deep-page': q({ page: deepPage }),
  'deep-page-name-sort': q({ sort: 'name:asc', page: deepPage }),
  'search-5pct': q({ search: searchTerm }),
  'search-none': q({ search: emptyTerm }),
};
const expectedRows: Record<Case, number> = {
  'no-db': DEFAULT_PER_PAGE,
  'page-1': DEFAULT_PER_PAGE,
  'deep-page': DEFAULT_PER_PAGE,
  'deep-page-name-sort': DEFAULT_PER_PAGE,
  'search-5pct': DEFAULT_PER_PAGE,
  'search-none': 0,
};
const xhr = { 'X-Requested-With': 'XMLHttpRequest' };

const seedHint = (url: string) =>
  `Seed it once (it takes a while), then run this again:\n` +
  `  createdb -h 127.0.0.1 -U postgres ${new URL(url).pathname.slice(1)}   # if it does not exist\n` +
  `  DATABASE_URL=${url} SESSION_SECRET=$(openssl rand -hex 32) npm run cli -- seed --competitors 1000000\n` +
  `(or point BENCH_1M_DATABASE_URL at a database that holds at least ${minRows.toLocaleString('en-US')} competitors)\n`;

const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });

/** How many events each projection still has to apply (head position − checkpoint). */
async function projectionLag(): Promise<Record<string, number>> {
  const head = await pool.query<{ p: string | null }>('SELECT max(position)::text AS p FROM events');
  const headPosition = Number(head.rows[0]?.p ?? 0);
  const { rows } = await pool.query<{ projection: string; position: string }>(
    'SELECT projection, position::text AS position FROM projection_checkpoints ORDER BY projection',
  );
  return Object.fromEntries(rows.map((r) => [r.projection, headPosition - Number(r.position)]));
}

// 1. The data set is there (read-only checks, before anything starts).
let total: number;
try {
  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM competitor_list');
  total = rows[0]?.n ?? 0;
} catch (error) {
  const code = (error as { code?: string }).code;
  process.stderr.write(
    `${databaseUrl}: ${(error as Error).message}` +
      (code === '3D000' || code === '42P01' ? ' (not seeded)' : '') +
      `\n${seedHint(databaseUrl)}`,
  );
  await pool.end();
  process.exit(1);
}
if (total < minRows) {
  process.stderr.write(
    `${databaseUrl} holds ${total.toLocaleString('en-US')} competitors, fewer than ${minRows.toLocaleString('en-US')}.\n` +
      seedHint(databaseUrl),
  );
  await pool.end();
  process.exit(1);
}
const matches = async (term: string) =>
  (
    await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM competitor_list WHERE search_text LIKE ${foldedSearch}`,
      [containsPattern(term)],
    )
  ).rows[0]?.n ?? 0;
const searchMatches = await matches(searchTerm);
const emptyMatches = await matches(emptyTerm);
report('data-table.dataset', {
  competitors: total,
  search_term: searchTerm,
  search_matches: searchMatches,
  search_pct: (100 * searchMatches) / total,
  empty_term: emptyTerm,
  empty_matches: emptyMatches,
});
if (searchMatches < total * 0.02 || searchMatches > total * 0.1) {
  process.stdout.write(
    `  note: "${searchTerm}" matches ${((100 * searchMatches) / total).toFixed(1)}% of the rows, not about 5%; ` +
      'pick another with --search-term\n',
  );
}

await ensureAssets();
const workDir = await mkdtemp(path.join(os.tmpdir(), 'rivals-bench-table-'));
const servers = new Map<'app' | 'bare', ServerProcess>();

try {
  // 2. Page 1's rows, once, as the route asks for them: the no-database baseline renders these.
  const result = await listCompetitors(pool, {
    search: '',
    sort: undefined,
    page: 1,
    perPage: DEFAULT_PER_PAGE,
  });
  const dataFile = path.join(workDir, 'fragment.json');
  await writeFile(dataFile, JSON.stringify({ result }));

  // 3. The real app on the big database (no Redis), and the baseline; each in its own process.
  const app = await spawnLocal({
    LOG_LEVEL: logLevel,
    DATABASE_URL: databaseUrl,
    SESSION_SECRET: 'd'.repeat(48),
    DEMO_DATA: 'false',
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
  });
  servers.set('app', app);
  const started = Date.now();
  await waitForStatus(app, '/readyz', { timeoutMs: 180_000, intervalMs: 200 });
  process.stdout.write(`  app ready at ${app.url} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  // The first start on this database creates the admin; sign in once the user list shows an account.
  for (let waited = 0; ; waited += 500) {
    const { rows } = await pool.query<{ email: string }>('SELECT email FROM user_list');
    if (rows.some((r) => r.email.toLowerCase() === ADMIN_EMAIL.toLowerCase())) break;
    if (waited > 60_000) {
      throw new Error(
        rows.length > 0
          ? `${databaseUrl} has users, but not ${ADMIN_EMAIL} (the first server started on it made another ` +
              `admin). Pass that admin with --admin-email/--admin-password (BENCH_ADMIN_EMAIL/BENCH_ADMIN_PASSWORD).`
          : `the user list never showed ${ADMIN_EMAIL}:\n${app.output()}`,
      );
    }
    await sleep(500);
  }
  const cookie = await signIn(app.url, ADMIN_EMAIL, ADMIN_PASSWORD);

  const bare = await spawnLocal(
    { BENCH_FRAGMENT_DATA: dataFile },
    { args: ['tests/bench/support/fragment-server.tsx'] },
  );
  servers.set('bare', bare);
  await waitForStatus(bare, '/competitors');

  // 4. Projections catching up (a fresh seed's audit log, say) would compete for the CPU: wait a while.
  let lag = await projectionLag();
  const lagAtStart = Object.values(lag).reduce((a, b) => a + b, 0);
  const deadline = Date.now() + catchupWaitSeconds * 1000;
  while (Object.values(lag).some((n) => n > 0) && Date.now() < deadline) {
    process.stdout.write(
      `  waiting for projections to catch up: ${Object.entries(lag)
        .filter(([, n]) => n > 0)
        .map(([p, n]) => `${p} ${n.toLocaleString('en-US')} behind`)
        .join(', ')}\n`,
    );
    await sleep(10_000);
    lag = await projectionLag();
  }
  const lagAtMeasure = Object.values(lag).reduce((a, b) => a + b, 0);
  report('data-table.projections', {
    behind_at_start: lagAtStart,
    behind_when_measured: lagAtMeasure,
    ...(lagAtMeasure > 0
      ? {
          still_catching_up: Object.keys(lag)
            .filter((p) => (lag[p] ?? 0) > 0)
            .join(','),
        }
      : {}),
  });

  // 5. Every case answers what it should; bytes of the XHR answer vs the full page.
  const targetOf = (c: Case) => (c === 'no-db' ? bare : app);
  const headersOf = (c: Case): Record<string, string> => (c === 'no-db' ? xhr : { ...xhr, Cookie: cookie });
  for (const c of cases) {
    const response = await fetch(targetOf(c).url + paths[c], { headers: headersOf(c), redirect: 'manual' });
    const html = await response.text();
    if (response.status !== 200 || countRows(html) !== expectedRows[c]) {
      throw new Error(
        `${c}: ${paths[c]} answered ${response.status} with ${countRows(html)} rows, not ${expectedRows[c]}:\n` +
          html.slice(0, 300),
      );
    }
    const chrome = /<script[\s>]|<link[\s>]|<h1[\s>]/i.exec(html);
    if (c !== 'no-db' && chrome)
      throw new Error(
        `${c}: the XHR answer carries the page chrome: ${html.slice(Math.max(0, chrome.index - 200), chrome.index + 200)}`,
      );
    if (c === 'deep-page') {
      // Page n in rank order starts at rank (n − 1) × 15 + 1.
      const { rows } = await pool.query<{ id: string }>('SELECT id FROM competitor_list WHERE rank = $1', [
        (deepPage - 1) * DEFAULT_PER_PAGE + 1,
      ]);
      if (!rows[0] || !html.includes(`data-row-id="${rows[0].id}"`))
        throw new Error(
          `deep-page: page ${deepPage} does not start at rank ${(deepPage - 1) * DEFAULT_PER_PAGE + 1}`,
        );
    }
  }
  const fetchText = async (url: string, headers: Record<string, string>) =>
    (await fetch(url, { headers, redirect: 'manual' })).text();
  const xhrHtml = await fetchText(app.url + paths['page-1'], { ...xhr, Cookie: cookie });
  const fullHtml = await fetchText(app.url + paths['page-1'], { Cookie: cookie });
  const bareHtml = await fetchText(bare.url + paths['no-db'], xhr);
  if (countRows(fullHtml) !== DEFAULT_PER_PAGE) throw new Error('the full page does not show 15 rows');
  const bytes = (s: string) => Buffer.byteLength(s);
  const gz = (s: string) => gzipSync(s).length;
  report('data-table.bytes.page-1', {
    xhr_bytes: bytes(xhrHtml),
    full_page_bytes: bytes(fullHtml),
    xhr_pct_of_full: (100 * bytes(xhrHtml)) / bytes(fullHtml),
    xhr_gzip_bytes: gz(xhrHtml),
    full_page_gzip_bytes: gz(fullHtml),
    no_db_xhr_bytes: bytes(bareHtml),
  });

  // 6. Load: warm-up, then rounds with the order rotating.
  type Measured = LoadResult & { cpuUsPerRequest: number };
  const measure = async (c: Case, duration: number): Promise<Measured> => {
    const server = targetOf(c);
    const cpuBefore = await processCpuMs(server.child.pid);
    const result = await loadTest(server.url + paths[c], {
      connections,
      seconds: duration,
      headers: headersOf(c),
    });
    const cpuMs = (await processCpuMs(server.child.pid)) - cpuBefore;
    return { ...result, cpuUsPerRequest: (1000 * cpuMs) / Math.max(1, result.requests) };
  };
  for (const c of cases) {
    const r = await measure(c, warmupSeconds);
    await sleep(Math.min(5_000, 500 + r.p99Ms));
  }
  const results = new Map<Case, Measured[]>(cases.map((c) => [c, []]));
  for (let round = 0; round < rounds; round++) {
    const order = cases.map((_, i) => cases[(i + round) % cases.length] as Case);
    for (const c of order) {
      const r = await measure(c, seconds);
      results.get(c)?.push(r);
      // autocannon stops sending at the deadline, but the answers still in flight keep Postgres busy:
      // let them finish before the next case starts.
      await sleep(Math.min(5_000, 500 + r.p99Ms));
      process.stdout.write(
        `  round ${round + 1}/${rounds} ${c}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms, ` +
          `server CPU ${r.cpuUsPerRequest.toFixed(0)} µs/req${r.failures ? `, ${r.failures} failures` : ''}\n`,
      );
    }
  }

  for (const [c, list] of results) {
    const rps = medianSpread(list.map((r) => r.rps));
    const p50 = medianSpread(list.map((r) => r.p50Ms));
    const p99 = medianSpread(list.map((r) => r.p99Ms));
    report(`data-table.${c}`, {
      rounds: list.length,
      connections,
      rps: Math.round(rps.median),
      rps_min: Math.round(rps.min),
      rps_max: Math.round(rps.max),
      p50_ms: p50.median,
      p50_min: p50.min,
      p50_max: p50.max,
      p99_ms: p99.median,
      p99_min: p99.min,
      p99_max: p99.max,
      server_cpu_us_per_req: Math.round(medianSpread(list.map((r) => r.cpuUsPerRequest)).median),
      failures: list.reduce((sum, r) => sum + r.failures, 0),
    });
  }

  /** One figure of `a` against `b`, per round (measured within a minute of each other), then median and spread. */
  const ratio = (
    name: string,
    a: Case,
    b: Case,
    pick: (r: Measured) => number,
    target?: { min?: number; max?: number },
    scale = 100,
  ) => {
    const mine = results.get(a);
    const theirs = results.get(b);
    if (!mine?.length || !theirs?.length) return;
    const spread = medianSpread(mine.map((r, i) => (scale * pick(r)) / pick(theirs[i] ?? r)));
    const unit = scale === 100 ? 'pct' : 'times';
    const met: Record<string, string | number> = {};
    if (target?.min !== undefined) {
      met[`target_min_${unit}`] = target.min;
      met.met = spread.median >= target.min ? 'yes' : 'no';
    } else if (target?.max !== undefined) {
      met[`target_max_${unit}`] = target.max;
      met.met = spread.median <= target.max ? 'yes' : 'no';
    }
    report(`data-table.ratio.${name}`, {
      [unit]: spread.median,
      [`${unit}_min`]: spread.min,
      [`${unit}_max`]: spread.max,
      ...met,
    });
  };
  const rpsOf = (r: Measured) => r.rps;
  const p50Of = (r: Measured) => r.p50Ms;
  ratio('page-1-rps-vs-no-db', 'page-1', 'no-db', rpsOf, { min: 40 });
  ratio('search-5pct-rps-vs-page-1', 'search-5pct', 'page-1', rpsOf, { min: 25 });
  ratio('search-none-rps-vs-page-1', 'search-none', 'page-1', rpsOf, { min: 25 });
  ratio('deep-page-p50-vs-page-1', 'deep-page', 'page-1', p50Of, { max: 5 }, 1);
  ratio('deep-page-name-sort-p50-vs-page-1', 'deep-page-name-sort', 'page-1', p50Of, undefined, 1);
  reportMachine('data-table');
} finally {
  for (const server of servers.values()) await server.stop();
  await pool.end();
  await rm(workDir, { recursive: true, force: true });
}
