/**
 * The no-database baseline of the data-table benchmark, run as its own process (like the real app) so
 * the load generator never shares its event loop: node:http + renderToString of the competitor table's
 * XHR answer (`CompetitorListFragment`, what the app sends for `X-Requested-With: XMLHttpRequest`) from
 * the same rows, fetched once from the database by the benchmark. No framework, no session, no query.
 *
 * Env: PORT, HOST, BENCH_FRAGMENT_DATA (JSON file: `{ result: ListResult }`).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { renderToString } from 'react-dom/server';
import {
  competitorSortColumns,
  type ListResult,
} from '#projections/competitor-list/competitor-list.queries.ts';
import { parseTableState } from '#web/components/data-table/table-state.ts';
import { CompetitorListFragment } from '#web/pages/competitors/competitor-list.page.tsx';
import type { PageContext, SessionUser } from '#web/pages/page-context.ts';

const dataFile = process.env.BENCH_FRAGMENT_DATA;
if (!dataFile) throw new Error('set BENCH_FRAGMENT_DATA');
const { result } = JSON.parse(await readFile(dataFile, 'utf8')) as { result: ListResult };

const user: SessionUser = {
  id: 'bench-admin',
  email: 'bench-admin@rivals.test',
  name: 'Bench Admin',
  role: 'admin',
};
const csrfToken = randomBytes(32).toString('base64url');

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (req.method !== 'GET' || url.pathname !== '/competitors') {
    res.writeHead(404).end();
    return;
  }
  const state = parseTableState(Object.fromEntries(url.searchParams), competitorSortColumns);
  const page: PageContext = {
    nonce: randomBytes(16).toString('base64'),
    csrfToken,
    user,
    path: url.pathname,
    flash: [],
    timeZone: 'UTC',
    assets: { css: '/assets/app.css', js: '/assets/main.js' },
  };
  const html = `<!doctype html>${renderToString(
    <CompetitorListFragment page={page} state={{ ...state, page: result.page }} result={result} />,
  )}`;
  res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', Vary: 'X-Requested-With' });
  res.end(html);
});
server.keepAliveTimeout = 5_000;
server.listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
