import type { Context, Middleware } from 'koa';
import {
  isConnectionError,
  isDatabaseUnavailable,
  pgErrorCode,
  StorageMissingError,
  unavailableReason,
  type Database,
} from '#infra/db/database.ts';
import {
  AppError,
  BusyError,
  ServiceUnavailableError,
  TooManyRequestsError,
  ValidationError,
} from '#infra/errors.ts';
import type { Logger } from '#infra/logger.ts';
import { ErrorPage } from '../pages/error.page.tsx';
import { pageContext, renderHtml } from '../render.server.tsx';
import { safeNext } from '../routing.server.ts';
import { siteOrigin, type TrustProxy } from '../site-origin.server.ts';

const wantsJson = (ctx: Context) =>
  ctx.get('X-Requested-With') === 'XMLHttpRequest' || ctx.accepts(['html', 'json']) === 'json';

const titles: Record<number, string> = {
  400: 'That did not look right',
  401: 'Please sign in',
  403: 'Not allowed',
  404: 'Not found',
  405: 'Not here',
  409: 'Changed meanwhile',
  413: 'Too large',
  429: 'Slow down',
  500: 'Something went wrong',
  503: 'Back in a moment',
};

/**
 * One place turns errors into answers: an HTML page for browsers, JSON for XHR. Users see a message
 * they can act on; stack traces and SQL go to the log only.
 */
export function errorMiddleware(
  log: Logger,
  db?: Pick<Database, 'checkStorage' | 'pool'>,
  /** TRUST_PROXY (default false): which Referer is this site's (site-origin.server.ts). */
  trustProxy: TrustProxy = false,
): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined)
        throw new AppError(404, 'not_found', 'We could not find that page.');
      // The router's bare "Method Not Allowed" (a typed /logout, a PUT): said in words, its Allow kept.
      if (ctx.status === 405 && ctx.body === undefined)
        throw new AppError(
          405,
          'method_not_allowed',
          methodNotAllowed(ctx.method, ctx.response.get('Allow')),
        );
    } catch (thrown) {
      const error = await storageMissingBehind(thrown, db);
      const known = busyPool(error, db) ?? toAppError(error);
      if (error instanceof StorageMissingError)
        // Not a fault of this request, and the same for every request: what to do, without a stack.
        log.warn({ method: ctx.method, path: ctx.path, cause: causeOf(thrown) }, error.message);
      else if (!known) log.error({ err: error, method: ctx.method, path: ctx.path }, 'request failed');
      else if (known instanceof BusyError) log.warn({ method: ctx.method, path: ctx.path }, known.message);
      else if (known.status >= 500) log.error({ err: error }, known.message);
      const status = known?.status ?? 500;
      const message =
        known?.message ?? 'Something went wrong on our side. It has been logged; please try again.';
      ctx.set('Cache-Control', 'no-store');
      if (error instanceof TooManyRequestsError) ctx.set('Retry-After', String(error.retryAfterSeconds));
      if (status === 503) ctx.set('Retry-After', '2');
      if (wantsJson(ctx)) {
        ctx.status = status;
        ctx.body = {
          error: {
            code: known?.code ?? 'internal',
            message,
            ...(known instanceof ValidationError ? { fields: known.fields } : {}),
          },
        };
        return;
      }
      const page = pageContext(ctx);
      renderHtml(
        ctx,
        <ErrorPage
          page={page}
          status={status}
          title={titles[status] ?? 'Error'}
          message={message}
          signInNext={status === 401 ? whereToReturn(ctx, trustProxy) : undefined}
        />,
        status,
      );
    }
  };
}

/** What the address takes, from the router's Allow: a form's (POST) or a page's (GET, visited only). */
const methodNotAllowed = (method: string, allow: string) =>
  method === 'GET' || method === 'HEAD'
    ? "This address takes a form sent from a Rivals page, not a visit. Go back and use the page's button."
    : allow.split(/,\s*/).includes('POST')
      ? `This address does not take ${method} requests; Rivals' pages send their forms here with POST.`
      : `This address does not take ${method} requests: it is a page, open it in the browser.`;

/**
 * Where signing in again should lead: the page the user was on. A refused form post (its session ended
 * in another tab) comes back to the form it was sent from (its Referer, this site's only), not to the
 * table; a refused page comes back to itself.
 */
function whereToReturn(ctx: Context, trustProxy: TrustProxy): string {
  if (ctx.method === 'GET' || ctx.method === 'HEAD') return safeNext(ctx.url);
  try {
    const from = new URL(ctx.get('Referer'));
    const own = from.origin === siteOrigin(ctx.req.headers, trustProxy);
    return own ? safeNext(`${from.pathname}${from.search}`) : safeNext(undefined);
  } catch {
    return safeNext(undefined);
  }
}

/**
 * A database error while the database's files are gone (embedded: "could not open file base/5/…") is
 * that, not a fault of the request: the `StorageMissingError` saying so, or else the error as it was.
 */
async function storageMissingBehind(
  error: unknown,
  db: Pick<Database, 'checkStorage'> | undefined,
): Promise<unknown> {
  if (!db?.checkStorage || pgErrorCode(error) === undefined) return error;
  return db.checkStorage().then(
    () => error,
    (missing: unknown) => missing,
  );
}

const causeOf = (error: unknown) =>
  error instanceof StorageMissingError ? undefined : error instanceof Error ? error.message : String(error);

/**
 * A request that waited its whole `connectionTimeoutMillis` for a connection while every one of the
 * pool's was open and in use: the database is reachable and busy (a flood of requests), not gone, which
 * "cannot reach its database" said.
 */
function busyPool(error: unknown, db: Pick<Database, 'pool'> | undefined): AppError | undefined {
  const pool = db?.pool;
  if (!pool || !(error instanceof Error) || !/timeout exceeded when trying to connect/i.test(error.message))
    return undefined;
  if (pool.totalCount < (pool.options.max ?? 10) || pool.idleCount > 0) return undefined;
  return new BusyError(
    'Rivals is too busy to answer right now. Nothing was changed; please try again in a moment.',
  );
}

/** Our own errors, plus the framework's client errors (body too large, bad JSON) with their text. */
function toAppError(error: unknown): AppError | undefined {
  if (error instanceof AppError) return error;
  if (error instanceof StorageMissingError)
    return new ServiceUnavailableError(
      "Rivals cannot store anything, nor read what it has not loaded yet: the server's data folder is missing " +
        '(it was removed or replaced while Rivals was running). Nothing was saved. Whoever runs Rivals should stop it, ' +
        'then restore the folder from a backup, or start it again to begin with an empty database.',
    );
  // The database is down (a restart, a failover) or full: nothing was changed, and the same request may be sent
  // again — the browser does so by itself for calls, with the same idempotency key.
  if (isDatabaseUnavailable(error))
    return new ServiceUnavailableError(
      isConnectionError(error)
        ? 'Rivals cannot reach its database right now. Nothing was changed; please try again in a moment.'
        : `Rivals cannot store anything right now: ${unavailableReason(error)}. Nothing was changed; please try again later.`,
    );
  const e = error as { status?: number; expose?: boolean; message?: string };
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500 && e.expose) {
    return new AppError(e.status, 'bad_request', e.message ?? 'Bad request.');
  }
  return undefined;
}
