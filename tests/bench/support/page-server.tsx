/**
 * The two comparison servers of the /competitors benchmark, run as their own process (like the real
 * app) so the load generator never shares their event loop:
 *
 *  - `bare`: node:http + renderToString of the same React page (`CompetitorListPage`) from the same
 *    rows, prefetched. No framework, no database: the ceiling for this page on this machine.
 *  - `koa-memory`: the app itself (`createApp`, web/app.server.ts: every middleware and route, in its
 *    order) with the database answered from memory: the page's statements as recorded once from
 *    Postgres, and the session lookup answered with a fixed signed-in admin (`memorySession`). The
 *    client sends that session's cookie (`BENCH_SESSION_COOKIE`). What it adds to bare is what the app
 *    adds to a page, nothing more and nothing less, but the database.
 *
 * Both render the page with the same live mark (the session's), so they send the same markup.
 *
 * Env: PORT, HOST, LOG_LEVEL, BENCH_PAGE_MODE (bare | koa-memory), BENCH_PAGE_DATA (JSON file:
 * `{ result, recording }`, see competitors-page.bench.ts).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { renderToString } from 'react-dom/server';
import { loadConfig } from '#infra/config.ts';
import type { Database } from '#infra/db/database.ts';
import { createLogger } from '#infra/logger.ts';
import { createMetrics } from '#infra/metrics.ts';
import {
  competitorSortColumns,
  type ListResult,
} from '#projections/competitor-list/competitor-list.queries.ts';
import { createSearchPageCache } from '#projections/search-pages.ts';
import { createApp } from '#web/app.server.ts';
import type { AppDeps } from '#web/app-deps.server.ts';
import { loadAssets } from '#web/assets/assets.server.ts';
import { cookieNames } from '#web/auth/cookies.server.ts';
import { parseTableState } from '#web/components/data-table/table-state.ts';
import { CompetitorListPage } from '#web/pages/competitors/competitor-list.page.tsx';
import { memorySession } from './memory-session.ts';
import { replayQueryable } from './replay-db.ts';
import { assetsDir } from './services.ts';

const mode = process.env.BENCH_PAGE_MODE;
const dataFile = process.env.BENCH_PAGE_DATA;
if (!dataFile || (mode !== 'bare' && mode !== 'koa-memory')) {
  throw new Error('set BENCH_PAGE_MODE (bare | koa-memory) and BENCH_PAGE_DATA');
}
const data = JSON.parse(await readFile(dataFile, 'utf8')) as { result: ListResult; recording: string };
const { result } = data;
const assets = await loadAssets(assetsDir);
const assetUrls = { css: assets.url('app.css'), js: assets.url('main.js') };
const { user, listMark } = memorySession;
const secret = 's'.repeat(40);

function bareServer() {
  const csrfToken = randomBytes(32).toString('base64url');
  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method !== 'GET' || url.pathname !== '/competitors') {
      res.writeHead(404).end();
      return;
    }
    const state = parseTableState(Object.fromEntries(url.searchParams), competitorSortColumns);
    const page = {
      nonce: randomBytes(16).toString('base64'),
      csrfToken,
      user,
      path: url.pathname,
      flash: [],
      timeZone: 'UTC',
      assets: assetUrls,
      live: { list: listMark },
    };
    const html = `<!doctype html>${renderToString(<CompetitorListPage page={page} state={state} result={result} />)}`;
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(html);
  });
}

function koaServer() {
  const log = createLogger(process.env.LOG_LEVEL ?? 'info');
  const config = loadConfig({ LOG_LEVEL: 'info', SESSION_SECRET: secret, RATE_LIMIT_REQUESTS: '1000000' });
  // The page's statements as recorded; the session lookup (sessions.server.ts) for the fixed admin.
  const pool = replayQueryable(data.recording, memorySession.answer);
  const db = { kind: 'embedded', pool } as unknown as Database;
  const unused = {} as never;
  const deps: Omit<AppDeps, 'searchReads'> = {
    config,
    log,
    db,
    assets,
    sessionSecret: secret,
    sessions: { db: pool, secret, https: false, cookies: cookieNames(false) },
    searchPages: createSearchPageCache(),
    // Not on a page view's path.
    store: unused,
    gateway: unused,
    bus: unused,
    inbox: unused,
    deadLetters: unused,
    watcher: unused,
    redis: undefined,
    loginLimiter: unused,
  };
  return createServer(createApp(deps, createMetrics()).callback());
}

const server = mode === 'bare' ? bareServer() : koaServer();
server.keepAliveTimeout = 5_000;
server.listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
