import type { Context, Middleware } from 'koa';
import { ForbiddenError, UnauthorizedError } from '#infra/errors.ts';
import { fromOwnSite, type TrustProxy } from '../site-origin.server.ts';
import {
  anonTokenPattern,
  memoHmac,
  newAnonToken,
  safeEqual,
  setCookie,
  type CookieNames,
} from './cookies.server.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const SESSION_ENDED =
  'Your session has ended (signed out, expired or the account disabled), so nothing was changed. Sign in again and repeat your change.';

/**
 * Forms that answer a token which no longer matches their own way, by path (after the origin check):
 * the answer says whether it answered (true) or leaves the request to the usual refusal (false). Only for
 * forms whose answer never makes a change on a stale page's word (the sign-in form).
 */
export type StaleFormAnswers = Readonly<
  Record<string, (ctx: Context, sent: string) => boolean | Promise<boolean>>
>;

/** The stale-form answer for a path as the router matches it: any case, a trailing slash or not. */
function staleAnswer(answers: StaleFormAnswers | undefined, path: string) {
  const key = path.toLowerCase().replace(/\/+$/, '');
  return answers && Object.hasOwn(answers, key) ? answers[key] : undefined;
}

/**
 * CSRF protection on every state-changing request: the request must come from our own origin
 * (Sec-Fetch-Site / Origin) and carry the token derived from the visitor's session, or, before sign-in,
 * from an anonymous cookie (so the sign-in form is protected too). Forms send `_csrf`; XHR sends
 * `X-CSRF-Token`. Must run after the session and body parser.
 */
export function csrfMiddleware(options: {
  secret: string;
  https: boolean;
  cookies: CookieNames;
  trustProxy: TrustProxy;
  /** Forms answered their own way when their token is out of date (after the origin check). */
  staleForms?: StaleFormAnswers;
}): Middleware {
  const { https, cookies } = options;
  // A session's form token is the same on every request of that session: computed once.
  const tokenOf = memoHmac(options.secret);
  return async (ctx, next) => {
    let basis = ctx.state.sessionToken as string | undefined;
    if (!basis) {
      basis = ctx.cookies.get(cookies.anon);
      if (!basis || !anonTokenPattern.test(basis)) {
        basis = newAnonToken();
        setCookie(ctx, cookies.anon, basis, { https });
      }
    }
    const expected = tokenOf(`csrf:${basis}`);
    ctx.state.csrfToken = expected;

    if (!SAFE_METHODS.has(ctx.method)) {
      if (!fromOwnSite(ctx.req.headers, options.trustProxy))
        throw new ForbiddenError('This request came from another site and was blocked.');
      const body = ctx.request.body as Record<string, unknown> | undefined;
      const sent = ctx.get('X-CSRF-Token') || (typeof body?._csrf === 'string' ? body._csrf : '');
      if (!sent || !safeEqual(sent, expected)) {
        const stale = ctx.method === 'POST' ? staleAnswer(options.staleForms, ctx.path) : undefined;
        if (await stale?.(ctx, sent)) return;
        // The page was signed in, and its session has ended since (signed out elsewhere, expired, or
        // the account disabled): that, not a broken form, is why its token no longer matches. Its
        // cookie may be gone already (signed out in another tab of this browser, or cleared by any
        // request since): a token sent to anything but the sign-in form came from a signed-in page.
        if (
          !ctx.state.sessionToken &&
          (ctx.cookies.get(cookies.session) || (sent && ctx.path !== '/login'))
        ) {
          // Signing out of a session that already ended: the user is where they asked to be.
          if (ctx.path === '/logout') return ctx.redirect('/login');
          throw new UnauthorizedError(SESSION_ENDED);
        }
        throw new ForbiddenError(
          'Your session form token is missing or out of date. Reload the page and try again.',
        );
      }
    }
    await next();
  };
}
