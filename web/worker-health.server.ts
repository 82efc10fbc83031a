import { createServer, type Server } from 'node:http';
import Router from '@koa/router';
import Koa from 'koa';
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
  const router = new Router();
  healthRoutes(router, deps, metrics);
  app.use(router.routes());
  const server = createServer(app.callback());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(deps.config.PORT, deps.config.HOST, resolve);
  });
  return server;
}
