import type { Middleware } from 'koa';
import type { Metrics } from '#infra/metrics.ts';

/** Times every request into `http_requests`, labelled by method, matched route (or `unmatched`) and status. */
export const httpMetricsMiddleware =
  (metrics: Metrics): Middleware =>
  async (ctx, next) => {
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
  };
