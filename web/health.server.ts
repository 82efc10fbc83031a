import type Router from '@koa/router';
import { Gauge } from 'prom-client';
import type { Metrics } from '#infra/metrics.ts';
import { NotFoundError, UnauthorizedError } from '#infra/errors.ts';
import { projectionLags } from '#projections/lag.ts';
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
    if (checks.database === 'ok') {
      // A projection far behind the log serves stale pages: take this instance out of rotation. One
      // being rebuilt for a new code version keeps serving its old tables and does not count.
      const limit = deps.config.READY_MAX_LAG_EVENTS;
      try {
        const lags = await timeout(projectionLags(deps.db.pool));
        const behind = lags.filter((l) => l.builtVersion === l.version && l.lagEvents > limit);
        checks.projections =
          behind.length === 0
            ? 'ok'
            : `behind: ${behind.map((l) => `${l.name} by ${l.lagEvents} events (${Math.round(l.lagSeconds)} s)`).join(', ')}; limit ${limit} (READY_MAX_LAG_EVENTS)`;
      } catch (error) {
        checks.projections = `unknown: ${(error as Error).message}`;
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
  // Projection lag, read when Prometheus scrapes.
  const lagGauges = {
    events: new Gauge({
      name: 'rivals_projection_lag_events',
      help: 'Events committed after the projection checkpoint',
      labelNames: ['projection'],
      registers: [metrics.registry],
    }),
    seconds: new Gauge({
      name: 'rivals_projection_lag_seconds',
      help: 'Age of the oldest event the projection has not applied yet',
      labelNames: ['projection'],
      registers: [metrics.registry],
    }),
  };
  const readLag = async () => {
    for (const lag of await projectionLags(deps.db.pool)) {
      lagGauges.events.set({ projection: lag.name }, lag.lagEvents);
      lagGauges.seconds.set({ projection: lag.name }, lag.lagSeconds);
    }
  };

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
    await readLag().catch(() => undefined);
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
}
