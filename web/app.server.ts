import Router from '@koa/router';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { ContentTooLargeError, ValidationError } from '#infra/errors.ts';
import type { Metrics } from '#infra/metrics.ts';
import type { AppDeps } from './app-deps.server.ts';
import { csrfMiddleware } from './auth/csrf.server.ts';
import { flashMiddleware } from './auth/flash.server.ts';
import { sessionMiddleware } from './auth/sessions.server.ts';
import { healthRoutes } from './health.server.ts';
import { errorMiddleware } from './middleware/errors.server.tsx';
import { httpMetricsMiddleware } from './middleware/http-metrics.server.ts';
import { requestContextMiddleware } from './middleware/request-context.server.ts';
import {
  bodyLimits,
  FormNotUtf8Error,
  readableBodiesOnly,
  utf8Body,
} from './middleware/body-limits.server.ts';
import { utf8QueryOnly } from './middleware/utf8-query.server.ts';
import { nestedDeeperThan } from './middleware/body-depth.server.ts';
import { storageGuard } from './middleware/storage-guard.server.ts';
import { securityHeaders } from './middleware/security-headers.server.ts';
import { noStoreByDefault } from './middleware/no-store.server.ts';
import { requestRateLimit } from './middleware/request-rate.server.ts';
import { componentRoutes } from './component-protocol/component.routes.server.ts';
import { liveRoutes } from './realtime/live.routes.server.ts';
import { auditRoutes } from './pages/audit/audit.routes.server.tsx';
import { historyRoutes } from './pages/history/history.routes.server.tsx';
import { overviewRoutes } from './pages/overview.routes.server.tsx';
import { opsRoutes } from './pages/ops/ops.routes.server.tsx';
import { LARGE_BODY_LIMIT, largeBodyComponents } from './component-protocol/registry.server.ts';
import { orderingRoutes } from './pages/ordering/ordering.routes.server.tsx';
import { competitorFormRoutes } from './pages/competitors/competitor-form.routes.server.tsx';
import { competitorListRoutes } from './pages/competitors/competitor-list.routes.server.tsx';
import { noteFormRoutes } from './pages/competitors/note-form.routes.server.tsx';
import { loginRoutes } from './pages/login/login.routes.server.tsx';
import { staleSignInForms } from './pages/login/stale-sign-in.server.tsx';
import { staleSignOutForms } from './pages/login/stale-sign-out.server.tsx';
import { userRoutes } from './pages/users/users.routes.server.tsx';
import { setPasswordRoutes } from './pages/users/set-password.routes.server.tsx';
import { accountRoutes } from './pages/account/account.routes.server.tsx';
import { stalePasswordChangeForms } from './pages/account/stale-password-change.server.ts';
import { mountRoutes, type RouteDef } from './routing.server.ts';
import { liveMarksAtRender } from './realtime/live-marks.server.ts';
import { createSearchReads } from './search-reads.server.ts';

/** The pages and forms, each with the action it performs. */
const pageRoutes: readonly RouteDef[] = [
  ...loginRoutes,
  ...competitorFormRoutes,
  ...competitorListRoutes,
  ...noteFormRoutes,
  ...userRoutes,
  ...setPasswordRoutes,
  ...accountRoutes,
  ...historyRoutes,
  ...auditRoutes,
  ...overviewRoutes,
  ...opsRoutes,
  ...orderingRoutes,
];

/** Every route, each with the action it performs (the authorization matrix reads this). */
export const appRoutes: readonly RouteDef[] = [
  ...pageRoutes,
  // A component answer renders the page the call came from: one of the pages above.
  ...componentRoutes(pageRoutes),
  ...liveRoutes,
];

const MAX_JSON_DEPTH = 8;

/** Builds the Koa app from its dependencies; opens nothing itself. */
export function createApp(given: Omit<AppDeps, 'searchReads'>, metrics: Metrics): Koa {
  const { config } = given;
  const deps: AppDeps = { ...given, searchReads: createSearchReads(given.db, config.SEARCH_TIMEOUT_MS) };
  const https = config.TRUST_PROXY === true;
  // Behind one trusted proxy (TLS or plain HTTP): the client address is the last hop it appended, not
  // what the client claims.
  const app = new Koa({ proxy: config.TRUST_PROXY !== false, maxIpsCount: 1 });
  app.silent = true; // errors are logged by errorMiddleware, once, with the request id

  const router = new Router();
  healthRoutes(router, deps, metrics);
  router.get('/', (ctx) => ctx.redirect('/competitors'));
  mountRoutes(router, appRoutes, deps);

  app.use(requestContextMiddleware(deps.log));
  app.use(httpMetricsMiddleware(metrics));
  app.use(securityHeaders({ https }));
  app.use(noStoreByDefault);
  const assetUrls = Object.freeze({ css: deps.assets.url('app.css'), js: deps.assets.url('main.js') });
  app.use((ctx, next) => {
    ctx.state.assets = assetUrls;
    ctx.state.flash = [];
    return next();
  });
  app.use(errorMiddleware(deps.log, deps.db, config.TRUST_PROXY));
  app.use(storageGuard(deps.db));
  app.use(deps.assets.middleware);
  const bodyOptions = {
    ...bodyLimits,
    onError: (error: Error) => {
      if (error instanceof FormNotUtf8Error) throw new ValidationError(error.message);
      // raw-body's error names the limit it hit (our reader refuses sooner: web/middleware/body-limits).
      if (/too large/i.test(error.message))
        throw new ContentTooLargeError((error as { limit?: number }).limit ?? bodyLimits.jsonLimit);
      throw new ValidationError('The request body could not be read.');
    },
  };
  const parseBody = koaBody(bodyOptions);
  // Drag-sorting sends whole lists: only those component calls may be larger (their schemas cap them).
  const parseLargeBody = koaBody({ ...bodyOptions, jsonLimit: LARGE_BODY_LIMIT });
  app.use(utf8QueryOnly);
  app.use(readableBodiesOnly);
  // The layers that do nothing after `next` are not async: they pass the chain's promise on as it is.
  const limits = { json: bodyLimits.jsonLimit, form: bodyLimits.formLimit };
  const largeLimits = { ...limits, json: LARGE_BODY_LIMIT };
  app.use((ctx, next) =>
    largeBodyComponents.has(ctx.path)
      ? utf8Body(ctx, next, parseLargeBody, largeLimits)
      : utf8Body(ctx, next, parseBody, limits),
  );
  app.use((ctx, next) => {
    if (nestedDeeperThan(ctx.request.body, MAX_JSON_DEPTH))
      throw new ValidationError('The request body is nested too deeply.');
    return next();
  });
  app.use(sessionMiddleware(deps.sessions));
  app.use(
    requestRateLimit({
      requests: config.RATE_LIMIT_REQUESTS,
      windowSeconds: config.RATE_LIMIT_WINDOW_SECONDS,
      log: deps.log,
    }),
  );
  app.use(flashMiddleware({ secret: deps.sessionSecret, https, cookies: deps.sessions.cookies }));
  app.use(
    csrfMiddleware({
      secret: deps.sessionSecret,
      https,
      cookies: deps.sessions.cookies,
      trustProxy: config.TRUST_PROXY,
      staleForms: {
        ...staleSignInForms(deps.sessions),
        ...staleSignOutForms(),
        ...stalePasswordChangeForms(deps.db.pool, deps.loginLimiter),
      },
    }),
  );
  app.use(liveMarksAtRender(deps.db.pool));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
