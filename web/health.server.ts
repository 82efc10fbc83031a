import type Router from '@koa/router';
import { Gauge } from 'prom-client';
import type { Metrics } from '#infra/metrics.ts';
import { CommandInbox } from '#events/store/command-inbox.ts';
import { NotFoundError, UnauthorizedError } from '#infra/errors.ts';
import { projectionLags } from '#projections/lag.ts';
import type { AppDeps } from './app-deps.server.ts';
import { safeEqual } from './auth/cookies.server.ts';
import { readinessChecks, readinessLogger } from './readiness-checks.server.ts';

/** Liveness, readiness (database, Redis when configured, projection lag, background work) and Prometheus metrics. */
export function healthRoutes(
  router: Router,
  deps: Pick<AppDeps, 'db' | 'redis' | 'bus' | 'readiness' | 'config' | 'log'>,
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
      metrics.unavailable.set({ dependency: name }, check.state === 'ok' ? 0 : 1);
    const ready = Object.values(checks).every((check) => check.state === 'ok');
    ctx.status = ready ? 200 : 503;
    ctx.body = {
      status: ready ? 'ready' : 'not ready',
      checks: Object.fromEntries(Object.entries(checks).map(([name, check]) => [name, check.state])),
    };
  });

  // For operators only (docs/decisions/0008-metrics-access.md): off unless METRICS_TOKEN is set, and
  // then only with `Authorization: Bearer <METRICS_TOKEN>`.
  // Projection lag and the command backlog, read when Prometheus scrapes.
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
  // Changes accepted and not handled yet: the bus's pending count misses those no worker has read (all
  // workers down) and those the bus lost (a Redis restart without persistence).
  const backlogGauges = {
    count: new Gauge({
      name: 'rivals_commands_unhandled',
      help: 'Changes accepted (in the inbox) and not handled yet',
      registers: [metrics.registry],
    }),
    oldest: new Gauge({
      name: 'rivals_commands_unhandled_oldest_seconds',
      help: 'How long the oldest change accepted and not handled yet has waited',
      registers: [metrics.registry],
    }),
  };
  const deadLetters = new Gauge({
    name: 'rivals_dead_letters',
    help: 'Commands the workers gave up on, waiting for an operator (Retry or Discard on /ops)',
    registers: [metrics.registry],
  });
  const inbox = new CommandInbox(deps.db.pool);
  const readLag = async () => {
    for (const lag of await projectionLags(deps.db.pool)) {
      lagGauges.events.set({ projection: lag.name }, lag.lagEvents);
      lagGauges.seconds.set({ projection: lag.name }, lag.lagSeconds);
    }
    const backlog = await inbox.backlog();
    backlogGauges.count.set(backlog.count);
    backlogGauges.oldest.set(backlog.oldestSeconds);
  };
  const readDeadLetters = async () => deadLetters.set(await deps.bus.deadLetterCount());

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
    await Promise.all([readLag().catch(() => undefined), readDeadLetters().catch(() => undefined)]);
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
}
