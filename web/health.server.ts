import type Router from '@koa/router';
import type { Metrics } from '#infra/metrics.ts';
import { NotFoundError, UnauthorizedError } from '#infra/errors.ts';
import type { AppDeps } from './app-deps.server.ts';
import { safeEqual } from './auth/cookies.server.ts';
import { passes, readinessChecks, readinessLogger } from './readiness-checks.server.ts';
import { scrapeGauges } from './scrape-gauges.server.ts';

/** Liveness, readiness (database, Redis when configured, projection lag, background work) and Prometheus metrics. */
export function healthRoutes(
  router: Router,
  deps: Pick<AppDeps, 'db' | 'redis' | 'inbox' | 'deadLetters' | 'readiness' | 'config' | 'log'>,
  metrics: Metrics,
): void {
  router.get('/healthz', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'ok' };
  });

  const logChanges = readinessLogger(deps.log);
  router.get('/readyz', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const checks = await readinessChecks(deps);
    logChanges(checks);
    metrics.unavailable.reset();
    for (const [name, check] of Object.entries(checks))
      metrics.unavailable.set({ dependency: name }, passes(check) ? 0 : 1);
    const ready = Object.values(checks).every(passes);
    ctx.status = ready ? 200 : 503;
    ctx.body = {
      status: ready ? 'ready' : 'not ready',
      checks: Object.fromEntries(Object.entries(checks).map(([name, check]) => [name, check.state])),
    };
  });

  // For operators only (docs/decisions/0008-metrics-access.md): off unless METRICS_TOKEN is set, and
  // then only with `Authorization: Bearer <METRICS_TOKEN>`.
  const readGauges = scrapeGauges(deps, metrics.registry);

  router.get('/metrics', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const token = deps.config.METRICS_TOKEN;
    if (!token) throw new NotFoundError();
    // The scheme is case-insensitive and may be followed by several spaces (RFC 9110, 11.4).
    const sent = /^Bearer +(\S+)$/i.exec(ctx.get('Authorization'))?.[1] ?? '';
    if (!safeEqual(sent, token)) {
      ctx.set('WWW-Authenticate', 'Bearer realm="metrics"');
      throw new UnauthorizedError('Metrics need the operator token: Authorization: Bearer <METRICS_TOKEN>.');
    }
    // Only once the token is checked: a request without it (or with /metrics off) costs no database query.
    await readGauges();
    // What background work and writes reported is known without a query: current at every scrape, not
    // only as of the last /readyz (which sets the checks that do query).
    for (const [dependency, unavailable] of Object.entries(deps.readiness?.unavailable() ?? {}))
      metrics.unavailable.set({ dependency }, unavailable ? 1 : 0);
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
}
