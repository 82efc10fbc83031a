/**
 * The two comparison servers of the /competitors benchmark, run as their own process (like the real
 * app) so the load generator never shares their event loop:
 *
 *  - `bare`: node:http + renderToString of the same React page (`CompetitorListPage`) from the same
 *    rows, prefetched. No framework, no database: the ceiling for this page on this machine.
 *  - `koa-memory`: the app's middleware stack in createApp's order (request context and logging,
 *    metrics, security headers with a fresh CSP nonce, error pages, assets, body parser, flash, CSRF,
 *    router) and the app's own /competitors route (guard, table state, query, render), with the
 *    database answered from memory (queries recorded once from Postgres). Only the session lookup (a
 *    database query per request) is replaced by a fixed signed-in user.
 *
 * Env: PORT, HOST, LOG_LEVEL, BENCH_PAGE_MODE (bare | koa-memory), BENCH_PAGE_DATA (JSON file:
 * `{ result, recording }`, see competitors-page.bench.ts); BENCH_KOA_WITHOUT leaves named middleware
 * out of koa-memory (request-context, metrics, security-headers, errors, assets, body, flash, csrf),
 * to see what each costs.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import Router from '@koa/router';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { renderToString } from 'react-dom/server';
import type { Database } from '#infra/db/database.ts';
import { createLogger } from '#infra/logger.ts';
import { createMetrics } from '#infra/metrics.ts';
import {
  competitorSortColumns,
  type ListResult,
} from '#projections/competitor-list/competitor-list.queries.ts';
import type { AppDeps } from '#web/app-deps.server.ts';
import { loadAssets } from '#web/assets/assets.server.ts';
import { cookieNames } from '#web/auth/cookies.server.ts';
import { csrfMiddleware } from '#web/auth/csrf.server.ts';
import { requestRateLimit } from '#web/middleware/request-rate.server.ts';
import { flashMiddleware } from '#web/auth/flash.server.ts';
import { parseTableState } from '#web/components/data-table/table-state.ts';
import { bodyLimits } from '#web/middleware/body-limits.server.ts';
import { errorMiddleware } from '#web/middleware/errors.server.tsx';
import { requestContextMiddleware } from '#web/middleware/request-context.server.ts';
import { httpMetricsMiddleware } from '#web/middleware/http-metrics.server.ts';
import { securityHeaders } from '#web/middleware/security-headers.server.ts';
import { CompetitorListPage } from '#web/pages/competitors/competitor-list.page.tsx';
import { competitorListRoutes } from '#web/pages/competitors/competitor-list.routes.server.tsx';
import type { SessionUser } from '#web/pages/page-context.ts';
import { mountRoutes } from '#web/routing.server.ts';
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
const user: SessionUser = {
  id: 'bench-admin',
  email: 'bench-admin@rivals.test',
  name: 'Bench Admin',
  role: 'admin',
};
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
    };
    const html = `<!doctype html>${renderToString(<CompetitorListPage page={page} state={state} result={result} />)}`;
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(html);
  });
}

function koaServer() {
  const log = createLogger(process.env.LOG_LEVEL ?? 'info');
  const metrics = createMetrics();
  const cookies = cookieNames(false);
  const app = new Koa({ proxy: false, maxIpsCount: 1 });
  app.silent = true;
  const router = new Router();
  // The app's own route definition, over a database that answers from memory.
  const pool = replayQueryable(data.recording);
  // Page 1 without a search: the route reads through searchReads, which passes it straight on (no gate).
  const deps = {
    db: { pool } as unknown as Database,
    searchReads: { run: (_searched, work) => work(pool) },
  } as AppDeps;
  mountRoutes(
    router,
    competitorListRoutes.filter((r) => r.method === 'GET' && r.path === '/competitors'),
    deps,
  );
  // The order of createApp (web/app.server.ts). BENCH_KOA_WITHOUT (comma-separated names) leaves
  // pieces out, to see what each costs.
  const without = new Set((process.env.BENCH_KOA_WITHOUT ?? '').split(',').filter(Boolean));
  const mount = (name: string, middleware: Koa.Middleware) => {
    if (!without.has(name)) app.use(middleware);
  };
  mount('request-context', requestContextMiddleware(log));
  mount('metrics', httpMetricsMiddleware(metrics));
  mount('security-headers', securityHeaders({ https: false }));
  app.use(async (ctx, next) => {
    ctx.state.assets = assetUrls;
    ctx.state.flash = [];
    ctx.state.nonce ??= 'no-nonce';
    await next();
  });
  mount('errors', errorMiddleware(log));
  mount('assets', assets.middleware);
  mount('body', koaBody(bodyLimits));
  // In place of sessionMiddleware (one database query per request): a fixed signed-in user.
  app.use(async (ctx, next) => {
    ctx.state.user = user;
    ctx.state.sessionToken = 'bench-session-token-0123456789';
    await next();
  });
  mount('request-rate', requestRateLimit({ requests: 1_000_000, windowSeconds: 10, log }));
  mount('flash', flashMiddleware({ secret, https: false, cookies }));
  mount('csrf', csrfMiddleware({ secret, https: false, cookies, trustProxy: false }));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return createServer(app.callback());
}

const server = mode === 'bare' ? bareServer() : koaServer();
server.keepAliveTimeout = 5_000;
server.listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
