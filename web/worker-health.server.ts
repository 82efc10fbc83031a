import { createServer, type Server } from 'node:http';
import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import { AppError } from '#infra/errors.ts';
import type { Logger } from '#infra/logger.ts';
import type { Metrics } from '#infra/metrics.ts';
import type { AppDeps } from './app-deps.server.ts';
import { healthRoutes } from './health.server.ts';

/**
 * A worker serves no pages, but a supervisor or load balancer still needs to ask it whether it is alive
 * and able to work: `/healthz`, `/readyz` (database, Redis, bus) and `/metrics` on the configured port.
 */
export async function startWorkerHealth(
  deps: Pick<AppDeps, 'db' | 'redis' | 'inbox' | 'deadLetters' | 'readiness' | 'config' | 'log'>,
  metrics: Metrics,
): Promise<Server> {
  const app = new Koa();
  app.silent = true; // errors are answered and logged by healthErrors, once
  const router = new Router();
  healthRoutes(router, deps, metrics);
  app.use(healthErrors(deps.log));
  app.use(router.routes());
  const server = createServer(app.callback());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(deps.config.PORT, deps.config.HOST, resolve);
  });
  return server;
}

/**
 * What the routes throw, answered as the web's JSON errors are: an `AppError` (a scrape without the token)
 * with its status, its words and the headers set before it (`WWW-Authenticate`, `Cache-Control`), anything
 * else as a 500 logged once. Koa's default answered a bare "Unauthorized", dropped those headers and
 * printed each refused scrape's stack trace to standard error.
 */
function healthErrors(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const known = error instanceof AppError ? error : undefined;
      if (!known) log.error({ err: error, method: ctx.method, path: ctx.path }, 'health request failed');
      ctx.status = known?.status ?? 500;
      ctx.body = {
        error: {
          code: known?.code ?? 'internal',
          message: known?.message ?? 'Something went wrong on our side. It has been logged.',
        },
      };
    }
  };
}
