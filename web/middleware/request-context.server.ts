import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import { requestContext, type Logger } from '#infra/logger.ts';

/**
 * Gives every request an id (kept from a trusted proxy's X-Request-Id when it looks sane), runs the
 * rest of the chain inside it so every log line carries it, and logs one line per request.
 */
export function requestContextMiddleware(log: Logger): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const reqId = /^[\w-]{8,64}$/.test(incoming) ? incoming : randomUUID();
    ctx.set('X-Request-Id', reqId);
    // Later code reads the header too (commands carry it as their correlation id, which the command
    // schema limits to 100 characters): it must never see one refused here.
    if (incoming && incoming !== reqId) delete ctx.request.headers['x-request-id'];
    const started = process.hrtime.bigint();
    try {
      // Only the call needs the context: everything it awaits inherits it.
      await requestContext.run({ reqId }, next);
    } finally {
      // Out of the context here, so the id is named.
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (ctx.path !== '/healthz' && !ctx.path.startsWith('/assets/')) {
        log.info(
          { reqId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10 },
          'request',
        );
      }
    }
  };
}
