import type Router from '@koa/router';
import type { Metrics } from '#infra/metrics.ts';
import { NotFoundError, UnauthorizedError } from '#infra/errors.ts';
import type { AppDeps } from './app-deps.server.ts';
import { safeEqual } from './auth/cookies.server.ts';

/** Liveness, readiness (database, and Redis when configured) and Prometheus metrics. */
export function healthRoutes(
  router: Router,
  deps: Pick<AppDeps, 'db' | 'redis' | 'readiness' | 'config'>,
  metrics: Metrics,
): void {
  router.get('/healthz', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'ok' };
  });

  router.get('/readyz', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const checks: Record<string, string> = {};
    const timeout = <T>(p: Promise<T>) =>
      Promise.race([
        p,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timed out')), 2_000)),
      ]);
    try {
      await timeout(deps.db.pool.query('SELECT 1'));
      checks.database = 'ok';
    } catch (error) {
      checks.database = `unavailable: ${(error as Error).message}`;
    }
    if (deps.redis) {
      try {
        await timeout(deps.redis.ping());
        checks.redis = 'ok';
      } catch (error) {
        checks.redis = `unavailable: ${(error as Error).message}`;
      }
    }
    // What background work reported: a worker that cannot reach its bus or database is not ready either.
    Object.assign(checks, deps.readiness?.current());
    metrics.unavailable.reset();
    for (const [name, value] of Object.entries(checks))
      metrics.unavailable.set({ dependency: name }, value === 'ok' ? 0 : 1);
    const ready = Object.values(checks).every((v) => v === 'ok');
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? 'ready' : 'not ready', checks };
  });

  // For operators only (docs/decisions/0008-metrics-access.md): off unless METRICS_TOKEN is set, and
  // then only with `Authorization: Bearer <METRICS_TOKEN>`.
  router.get('/metrics', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const token = deps.config.METRICS_TOKEN;
    if (!token) throw new NotFoundError();
    const sent = /^Bearer (\S+)$/.exec(ctx.get('Authorization'))?.[1] ?? '';
    if (!safeEqual(sent, token)) {
      ctx.set('WWW-Authenticate', 'Bearer realm="metrics"');
      throw new UnauthorizedError('Metrics need the operator token: Authorization: Bearer <METRICS_TOKEN>.');
    }
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
}
