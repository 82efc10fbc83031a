import type Router from '@koa/router';
import type { Metrics } from '#infra/metrics.ts';
import type { AppDeps } from './app-deps.server.ts';

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

  router.get('/metrics', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
}
