import Router from '@koa/router';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import type { Metrics } from '#infra/metrics.ts';
import type { AppDeps } from './app-deps.server.ts';
import { healthRoutes } from './health.server.ts';
import { errorMiddleware } from './middleware/errors.server.tsx';
import { requestContextMiddleware } from './middleware/request-context.server.ts';
import { securityHeaders } from './middleware/security-headers.server.ts';
import { competitorListRoutes } from './pages/competitors/competitor-list.routes.server.tsx';

/** Builds the Koa app from its dependencies; opens nothing itself. */
export function createApp(deps: AppDeps, metrics: Metrics): Koa {
  const app = new Koa({ proxy: deps.config.TRUST_PROXY });
  app.silent = true; // errors are logged by errorMiddleware, once, with the request id

  const router = new Router();
  healthRoutes(router, deps, metrics);
  router.get('/', (ctx) => ctx.redirect('/competitors'));
  competitorListRoutes(router, deps);

  app.use(requestContextMiddleware(deps.log));
  app.use(async (ctx, next) => {
    const end = metrics.httpRequests.startTimer();
    try {
      await next();
    } finally {
      end({
        method: ctx.method,
        route: (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched',
        status: ctx.status,
      });
    }
  });
  app.use(securityHeaders({ https: deps.config.TRUST_PROXY }));
  app.use(async (ctx, next) => {
    ctx.state.assets = { css: deps.assets.url('app.css'), js: deps.assets.url('main.js') };
    await next();
  });
  app.use(errorMiddleware(deps.log));
  app.use(deps.assets.middleware);
  app.use(
    koaBody({
      multipart: false,
      urlencoded: true,
      json: true,
      text: false,
      formLimit: '64kb',
      jsonLimit: '64kb',
      jsonStrict: true,
      queryString: { depth: 2, parameterLimit: 100 },
    }),
  );
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
