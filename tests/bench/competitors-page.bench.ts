/**
 * GET /competitors (15 rows, signed in) requests per second with autocannon, 10 connections, against:
 *  - koa-embedded: the real app (`web/main.server.ts`) on the embedded database,
 *  - koa-postgres: the real app on Postgres,
 *  - bare: node:http + renderToString of the same page from the same rows in memory (the ceiling),
 *  - koa-memory: the app itself (createApp) with the database answered from memory (the page's statements
 *    and the session lookup), see support/page-server.tsx.
 * Every server runs in its own process; subjects take turns within each round, so noise spreads.
 * Targets: real app ≥ 40% of bare; koa-memory ≥ 80% of bare.
 *
 *   npx tsx tests/bench/competitors-page.bench.ts [--rounds=3] [--duration=5] [--connections=10] [--rows=15]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { migrate } from '#infra/db/migrate.ts';
import { openEmbeddedDatabase } from '#infra/db/open-embedded.ts';
import { listCompetitors } from '#projections/competitor-list/competitor-list.queries.ts';
import { DEFAULT_PER_PAGE, perPageOptions } from '#web/components/data-table/table-state.ts';
import { caseKnob, knob, textKnob } from './support/knobs.ts';
import { loadTest, type LoadResult } from './support/load.ts';
import {
  countRows,
  processCpuMs,
  signIn,
  spawnLocal,
  waitForStatus,
  type ServerProcess,
} from './support/server-process.ts';
import { memorySession } from './support/memory-session.ts';
import { recordingQueryable } from './support/replay-db.ts';
import { seedCompetitors } from './support/seed.ts';
import { ensureAssets, openScratchPostgres } from './support/services.ts';
import { reportMachine } from './support/machine.ts';
import { medianSpread, report } from './support/stats.ts';

const rounds = knob('rounds', 3);
const seconds = knob('duration', 5);
const warmupSeconds = knob('warmup', 3);
const connections = knob('connections', 10);
const rows = knob('rows', DEFAULT_PER_PAGE);
if (!(perPageOptions as readonly number[]).includes(rows)) {
  throw new Error(`--rows must be a page size the table offers: ${perPageOptions.join(', ')}`);
}
const pagePath = rows === DEFAULT_PER_PAGE ? '/competitors' : `/competitors?perPage=${rows}`;
const logLevel = textKnob('log-level', 'info');
const subjects = caseKnob('subjects', ['bare', 'koa-memory', 'koa-embedded', 'koa-postgres'] as const);
type Subject = (typeof subjects)[number];

const ADMIN_EMAIL = 'bench-admin@rivals.test';
const ADMIN_PASSWORD = 'a-long-bench-password';

await ensureAssets();
const workDir = await mkdtemp(path.join(os.tmpdir(), 'rivals-bench-page-'));
const postgres = await openScratchPostgres({ label: 'bench_page' });
const servers = new Map<Subject, { server: ServerProcess; cookie: string }>();

try {
  // The same competitors in both databases, through the real command handler and projections.
  process.stdout.write(`seeding ${rows} competitors (Postgres and embedded)\n`);
  await seedCompetitors(postgres, rows);
  // The rows once, as the route asks for them (recorded, so koa-memory can answer the route's own
  // queries from memory; bare renders the result directly).
  const recorder = recordingQueryable(postgres.pool);
  const result = await listCompetitors(recorder.db, { search: '', sort: undefined, page: 1, perPage: rows });
  await postgres.close();
  const dataFile = path.join(workDir, 'page.json');
  await writeFile(dataFile, JSON.stringify({ result, recording: recorder.save() }));
  const dataDir = path.join(workDir, 'data');
  const embedded = await openEmbeddedDatabase(dataDir);
  await migrate(embedded.pool);
  await seedCompetitors(embedded, rows);
  await embedded.close();

  const common = { LOG_LEVEL: logLevel };
  const app = { ...common, ADMIN_EMAIL, ADMIN_PASSWORD, DEMO_DATA: 'false' };
  const envs: Record<Subject, { env: Record<string, string>; args?: string[] }> = {
    'koa-embedded': { env: { ...app, DATA_DIR: dataDir } },
    'koa-postgres': { env: { ...app, DATABASE_URL: postgres.url, SESSION_SECRET: 'b'.repeat(40) } },
    bare: {
      env: { ...common, BENCH_PAGE_MODE: 'bare', BENCH_PAGE_DATA: dataFile },
      args: ['tests/bench/support/page-server.tsx'],
    },
    'koa-memory': {
      env: { ...common, BENCH_PAGE_MODE: 'koa-memory', BENCH_PAGE_DATA: dataFile },
      args: ['tests/bench/support/page-server.tsx'],
    },
  };
  for (const subject of subjects) {
    const { env, args } = envs[subject];
    const server = await spawnLocal(env, { args });
    servers.set(subject, { server, cookie: '' });
    const real = subject.startsWith('koa-') && subject !== 'koa-memory';
    await waitForStatus(server, real ? '/readyz' : subject === 'bare' ? pagePath : '/healthz');
    const cookie = real
      ? await signIn(server.url, ADMIN_EMAIL, ADMIN_PASSWORD)
      : subject === 'koa-memory'
        ? memorySession.cookie
        : '';
    servers.set(subject, { server, cookie });
    const response = await fetch(`${server.url}${pagePath}`, {
      headers: { Cookie: cookie },
      redirect: 'manual',
    });
    const html = await response.text();
    if (response.status !== 200 || countRows(html) !== rows) {
      throw new Error(
        `${subject}: /competitors answered ${response.status} with ${countRows(html)} rows, not ${rows}`,
      );
    }
    process.stdout.write(`  ${subject} ready at ${server.url} (${html.length} bytes, ${rows} rows)\n`);
  }

  /** One load run, with the server process's CPU time per request (steadier than req/s on a busy machine). */
  const measure = async (
    subject: Subject,
    duration: number,
  ): Promise<LoadResult & { cpuUsPerRequest: number }> => {
    const entry = servers.get(subject);
    if (!entry) throw new Error(`no server for ${subject}`);
    const headers = entry.cookie ? { Cookie: entry.cookie } : undefined;
    const cpuBefore = await processCpuMs(entry.server.child.pid);
    const result = await loadTest(`${entry.server.url}${pagePath}`, {
      connections,
      seconds: duration,
      headers,
    });
    const cpuMs = (await processCpuMs(entry.server.child.pid)) - cpuBefore;
    return { ...result, cpuUsPerRequest: (1000 * cpuMs) / result.requests };
  };

  for (const subject of subjects) await measure(subject, warmupSeconds);
  const results = new Map<Subject, (LoadResult & { cpuUsPerRequest: number })[]>(
    subjects.map((s) => [s, []]),
  );
  for (let round = 0; round < rounds; round++) {
    // Rotate the order each round so no subject always runs first (or right after a heavy one).
    const order = subjects.map((_, i) => subjects[(i + round) % subjects.length] as Subject);
    for (const subject of order) {
      const result = await measure(subject, seconds);
      results.get(subject)?.push(result);
      process.stdout.write(
        `  round ${round + 1}/${rounds} ${subject}: ${result.rps.toFixed(0)} req/s, p99 ${result.p99Ms} ms, ` +
          `server CPU ${result.cpuUsPerRequest.toFixed(0)} µs/req` +
          (result.failures ? `, ${result.failures} failures` : '') +
          '\n',
      );
    }
  }

  for (const [subject, list] of results) {
    const rps = medianSpread(list.map((r) => r.rps));
    report(`competitors-page.${subject}`, {
      rounds: list.length,
      connections,
      rows,
      rps: Math.round(rps.median),
      rps_min: Math.round(rps.min),
      rps_max: Math.round(rps.max),
      p50_ms: medianSpread(list.map((r) => r.p50Ms)).median,
      p99_ms: medianSpread(list.map((r) => r.p99Ms)).median,
      server_cpu_us_per_req: Math.round(medianSpread(list.map((r) => r.cpuUsPerRequest)).median),
      failures: list.reduce((sum, r) => sum + r.failures, 0),
    });
  }
  // Ratios per round (each pair measured minutes apart at most), then their median and spread.
  const ratio = (subject: Subject, target: number) => {
    const mine = results.get(subject);
    const bare = results.get('bare');
    if (!mine || !bare || mine.length === 0 || bare.length === 0) return;
    const spread = medianSpread(mine.map((r, i) => (100 * r.rps) / (bare[i]?.rps ?? Number.NaN)));
    // The same comparison in server CPU per request (bare's CPU / ours): what the rate would be if each
    // server had a core to itself. Postgres's own CPU is not in it.
    const cpu = medianSpread(
      mine.map((r, i) => (100 * (bare[i]?.cpuUsPerRequest ?? Number.NaN)) / r.cpuUsPerRequest),
    );
    report(`competitors-page.ratio.${subject}-vs-bare`, {
      rps_pct: spread.median,
      rps_pct_min: spread.min,
      rps_pct_max: spread.max,
      cpu_pct: cpu.median,
      cpu_pct_min: cpu.min,
      cpu_pct_max: cpu.max,
      target_pct: target,
      met: spread.median >= target ? 'yes' : 'no',
    });
  };
  ratio('koa-embedded', 40);
  ratio('koa-postgres', 40);
  ratio('koa-memory', 80);
  reportMachine('competitors-page');
} finally {
  for (const { server } of servers.values()) await server.stop();
  await postgres.drop();
  await rm(workDir, { recursive: true, force: true });
}
