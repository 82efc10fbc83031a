/**
 * Live refresh cost (issue 13, item 5): `tables` open competitor tables, each a real Socket.IO client
 * with a signed-in session, and `rate` note changes a second from another user. Server CPU (user +
 * system, from /proc) per second of wall time, for two client behaviours in the same run, alternating
 * rounds (CPU of the app process plus every Postgres process: the page queries run there):
 *  - `every-change`: the first batch's client — every change heard refetches the table region (one refresh per
 *    200 ms batch, as the browser), no validators;
 *  - `affected-only`: today's client — a change refetches only a table whose page it can alter
 *    (web/realtime/affects-table.ts, the same function the browser runs), with `If-None-Match`, so an
 *    unchanged fragment answers 304 without rendering.
 * `idle` (tables connected, doing nothing on a change) is the floor: the writes and broadcasts alone.
 * Tables: mostly default order on pages spread over the list, some sorted by name, some searching, some
 * sorted by last update (every note change moves those). One change in five hits a row on page 1.
 *
 *   npx tsx tests/bench/live-refresh.bench.ts [--tables=200] [--rate=10] [--competitors=2000]
 *     [--duration=10] [--rounds=3]
 */
import { randomUUID } from 'node:crypto';
import { io, type Socket } from 'socket.io-client';
import { affectsPage, type ShownPage } from '#web/realtime/affects-table.ts';
import type { ChangeMessage } from '#web/realtime/change-message.ts';
import { TestClient } from '#tests/support/test-client.ts';
import { Cleanup, dropRedisPrefix } from './support/cleanup.ts';
import { knob } from './support/knobs.ts';
import { reportMachine } from './support/machine.ts';
import { seedCompetitors } from './support/seed.ts';
import {
  freePort,
  cpuUsedSince,
  processCpuMs,
  processesCpuMs,
  signIn,
  spawnNode,
  waitForStatus,
} from './support/server-process.ts';
import { openScratchPostgres, redisUrl, sleep, uniqueSuffix } from './support/services.ts';
import { medianSpread, report } from './support/stats.ts';

const tableCount = knob('tables', 200);
const rate = knob('rate', 10);
const competitorCount = knob('competitors', 2_000);
const seconds = knob('duration', 10);
const rounds = knob('rounds', 3);

const ADMIN_EMAIL = 'bench-admin@rivals.test';
const ADMIN_PASSWORD = 'a-long-bench-password';
const BATCH_MS = 200;

type Mode = 'idle' | 'every-change' | 'affected-only';

interface Table {
  url: string;
  shown: ShownPage;
  etag: string | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
  socket: Socket;
}

const counters = { gets: 0, notModified: 0, inFlight: 0, wanted: 0 };

/** The table's region, as the browser's refresh asks for it; remembers its rows and tag. */
async function refetch(table: Table, cookie: string, conditional: boolean): Promise<void> {
  const headers: Record<string, string> = { Cookie: cookie, 'X-Requested-With': 'XMLHttpRequest' };
  if (conditional && table.etag) headers['If-None-Match'] = table.etag;
  counters.inFlight++;
  const response = await fetch(table.url, { headers }).finally(() => counters.inFlight--);
  counters.gets++;
  if (response.status === 304) {
    counters.notModified++;
    return;
  }
  const html = await response.text();
  table.etag = response.headers.get('etag') ?? undefined;
  table.shown = {
    ...table.shown,
    rowIds: new Set([...html.matchAll(/data-row-id="([^"]+)"/g)].map((m) => m[1] ?? '')),
  };
}

/** The views the open tables show. */
function viewOf(i: number, lastPage: number): { url: string; sort: string; search: string } {
  const kind = i % 10;
  if (kind < 6) {
    const page = 1 + ((i * 7) % lastPage);
    return { url: `/competitors?page=${page}`, sort: '', search: '' };
  }
  if (kind < 8)
    return { url: `/competitors?sort=name:asc&page=${1 + (i % 5)}`, sort: 'name:asc', search: '' };
  if (kind < 9) return { url: `/competitors?search=rival%2012`, sort: '', search: 'rival 12' };
  return { url: '/competitors?sort=updated:desc', sort: 'updated:desc', search: '' };
}

/** The app's CPU and its database's (the page queries run in Postgres backends), by pid, in ms. */
async function serverCpu(pid: number | undefined): Promise<Map<number, number>> {
  const byPid = await processesCpuMs('postgres');
  if (pid !== undefined) byPid.set(pid, await processCpuMs(pid));
  return byPid;
}

async function main(): Promise<void> {
  reportMachine('live-refresh');
  const cleanup = new Cleanup();
  try {
    const db = await openScratchPostgres({ label: 'bench_live' });
    cleanup.add(() => db.drop());
    process.stdout.write(`seeding ${competitorCount} competitors…\n`);
    const ids = await seedCompetitors(db, competitorCount);

    const prefix = `bench:live:${uniqueSuffix()}:`;
    cleanup.add(() => dropRedisPrefix(prefix));
    const port = await freePort();
    const server = spawnNode({
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      ADMIN_EMAIL,
      ADMIN_PASSWORD,
      DATABASE_URL: db.url,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: prefix,
      SESSION_SECRET: 'l'.repeat(48),
    });
    cleanup.add(() => server.stop());
    await waitForStatus(server, '/readyz', { timeoutMs: 120_000, intervalMs: 100 });
    const cookie = await signIn(server.url, ADMIN_EMAIL, ADMIN_PASSWORD);

    // The writer: another session, saving notes through the component protocol.
    const writer = new TestClient(server.url);
    await writer.get('/login');
    await writer.postForm('/login', { email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    await writer.get('/competitors');
    const pageOne = [
      ...(await (await writer.get('/competitors', { xhr: true })).text()).matchAll(/data-row-id="([^"]+)"/g),
    ].map((m) => m[1] ?? '');

    const lastPage = Math.ceil(competitorCount / 15);
    let mode: Mode = 'idle';
    const tables: Table[] = [];
    for (let i = 0; i < tableCount; i++) {
      const view = viewOf(i, lastPage);
      const socket = io(server.url, {
        path: '/socket.io',
        transports: ['websocket'],
        extraHeaders: { Cookie: cookie },
        forceNew: true,
      });
      const table: Table = {
        url: server.url + view.url,
        shown: { sort: view.sort, search: view.search, rowIds: new Set() },
        etag: undefined,
        timer: undefined,
        socket,
      };
      socket.on('change', (message: ChangeMessage) => {
        if (mode === 'idle') return;
        if (mode === 'affected-only' && message.more === 0) {
          if (!message.touched.some((c) => affectsPage(c, table.shown))) return;
        }
        // As the browser: one refresh for the changes heard within 200 ms of the first.
        if (table.timer !== undefined) return;
        counters.wanted++;
        table.timer = setTimeout(() => {
          table.timer = undefined;
          void refetch(table, cookie, mode === 'affected-only').catch(() => undefined);
        }, BATCH_MS);
      });
      tables.push(table);
    }
    cleanup.add(async () => {
      for (const t of tables) t.socket.close();
    });
    for (const t of tables) await refetch(t, cookie, false);
    await Promise.all(
      tables.map(
        (t) =>
          new Promise<void>((resolve) =>
            t.socket.connected ? resolve() : t.socket.once('connect', resolve),
          ),
      ),
    );
    process.stdout.write(`${tables.length} tables connected\n`);

    const pid = server.child.pid;
    const results: Record<Mode, number[]> = { idle: [], 'every-change': [], 'affected-only': [] };
    const wanted: Record<Mode, number[]> = { idle: [], 'every-change': [], 'affected-only': [] };
    const gets: Record<Mode, number[]> = { idle: [], 'every-change': [], 'affected-only': [] };
    const notModified: Record<Mode, number[]> = { idle: [], 'every-change': [], 'affected-only': [] };
    let saves = 0;
    let failed = 0;
    for (let round = 1; round <= rounds; round++) {
      for (const m of ['idle', 'every-change', 'affected-only'] as const) {
        mode = m;
        counters.gets = 0;
        counters.notModified = 0;
        counters.wanted = 0;
        const cpuBefore = await serverCpu(pid);
        const started = Date.now();
        const inFlight: Promise<void>[] = [];
        for (let n = 0; Date.now() - started < seconds * 1000; n++) {
          const target = n % 5 === 0 ? pageOne[n % pageOne.length] : ids[(n * 7919) % ids.length];
          inFlight.push(
            writer
              .postJson('/components/competitor-notes', {
                event: 'update-note',
                payload: { competitorId: target, column: 'general', value: `Note ${randomUUID()}` },
              })
              .then(async (r) => {
                saves++;
                // 202: sent, but not answered within the bounded wait (an overloaded server).
                if (r.status !== 200) failed++;
                await r.arrayBuffer();
              })
              .catch((error: unknown) => {
                failed++;
                process.stdout.write(
                  `save failed: ${(error as Error).message} ${String((error as Error).cause)}\n`,
                );
              }),
          );
          await sleep(Math.max(0, started + ((n + 1) * 1000) / rate - Date.now()));
        }
        await Promise.all(inFlight);
        if (server.child.exitCode !== null) throw new Error(`the server exited:\n${server.output()}`);
        // The window ends when the refreshes it caused are answered (an overloaded server queues them).
        await sleep(BATCH_MS * 2);
        for (const until = Date.now() + 60_000; counters.inFlight > 0 && Date.now() < until;) await sleep(50);
        const wall = (Date.now() - started) / 1000;
        const cpu = cpuUsedSince(cpuBefore, await serverCpu(pid)) / 1000;
        results[m].push(cpu / wall);
        gets[m].push(counters.gets / wall);
        wanted[m].push(counters.wanted / wall);
        notModified[m].push(counters.notModified / wall);
        process.stdout.write(
          `round ${round} ${m}: server CPU ${(cpu / wall).toFixed(3)} s/s, ${(counters.gets / wall).toFixed(1)} GET/s (${(counters.notModified / wall).toFixed(1)} 304/s)\n`,
        );
      }
    }
    // What one refresh costs the server (app + database CPU), full render vs 304, sequentially.
    mode = 'idle';
    const probe = tables.find((t) => t.shown.sort === '') ?? tables[0];
    if (probe) {
      for (const [label, conditional] of [
        ['render', false],
        ['not-modified', true],
      ] as const) {
        const costs: number[] = [];
        for (let r = 0; r < 3; r++) {
          const before = await serverCpu(pid);
          const n = 200;
          for (let i = 0; i < n; i++) await refetch(probe, cookie, conditional);
          costs.push(cpuUsedSince(before, await serverCpu(pid)) / n);
        }
        const c = medianSpread(costs);
        report(`live-refresh cost ${label}`, {
          cpu_ms_per_request: c.median.toFixed(2),
          min: c.min.toFixed(2),
          max: c.max.toFixed(2),
        });
      }
    }
    const med = (m: Mode) => medianSpread(results[m]);
    const over = (m: Mode) => results[m].map((v, i) => v - (results.idle[i] ?? 0));
    for (const m of ['idle', 'every-change', 'affected-only'] as const) {
      const s = med(m);
      report(`live-refresh ${m}`, {
        tables: tableCount,
        changes_per_s: rate,
        competitors: competitorCount,
        cpu_s_per_s_median: s.median.toFixed(3),
        cpu_min: s.min.toFixed(3),
        cpu_max: s.max.toFixed(3),
        refreshes_wanted_per_s: medianSpread(wanted[m]).median.toFixed(1),
        gets_answered_per_s: medianSpread(gets[m]).median.toFixed(1),
        not_modified_per_s: medianSpread(notModified[m]).median.toFixed(1),
      });
    }
    const ratio = results['affected-only'].map((v, i) => v / (results['every-change'][i] ?? Number.NaN));
    const ratioAbove = over('affected-only').map((v, i) => v / (over('every-change')[i] ?? Number.NaN));
    const r = medianSpread(ratio);
    const ra = medianSpread(ratioAbove);
    report('live-refresh ratio', {
      affected_vs_every_cpu: `${(r.median * 100).toFixed(0)}% (${(r.min * 100).toFixed(0)}–${(r.max * 100).toFixed(0)})`,
      refresh_work_above_idle: `${(ra.median * 100).toFixed(0)}% (${(ra.min * 100).toFixed(0)}–${(ra.max * 100).toFixed(0)})`,
      saves,
      failed_saves: failed,
    });
  } finally {
    await cleanup.run();
  }
}

await main();
// Socket.IO clients and keep-alive sockets would hold the process open.
process.exit(0);
