import type Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import type { Context } from 'koa';
import { hasControlCharacters } from '#events/text.ts';
import { ForbiddenError, UnauthorizedError } from '#infra/errors.ts';
import type { AppDeps } from './app-deps.server.ts';
import { resendsAnAdmittedChange } from './commands.server.ts';
import { can, type Action } from '#events/user/permissions.ts';
import type { SessionUser } from './pages/page-context.ts';
import { validateRouteParams } from './input.server.ts';
import { isXhr } from './render.server.tsx';

/**
 * Every route names the action it performs; `public` routes need no sign-in; `authenticated` routes
 * need a signed-in user and check the action of what is asked inside (the component protocol).
 */
export interface RouteDef {
  method: 'GET' | 'POST';
  path: string;
  action: Action | 'public' | 'authenticated';
  handler(ctx: RouterContext, deps: AppDeps): Promise<void> | void;
}

export const route = (
  method: RouteDef['method'],
  path: string,
  action: RouteDef['action'],
  handler: RouteDef['handler'],
): RouteDef => ({
  method,
  path,
  action,
  handler,
});

const NEXT_FALLBACK = '/competitors';
const NEXT_BASE = 'http://rivals.invalid';

/**
 * Only same-site relative paths are honoured as `next`; anything else goes to the competitor list. The
 * check runs on the normalised path we would answer with (`/.//evil.example` normalises to
 * `//evil.example`, a link to another host), not on the raw string.
 */
export function safeNext(value: unknown): string {
  if (typeof value !== 'string' || !value.startsWith('/') || hasControlCharacters(value))
    return NEXT_FALLBACK;
  try {
    const url = new URL(value, NEXT_BASE);
    const path = `${url.pathname}${url.search}`;
    const local = url.origin === NEXT_BASE && !path.startsWith('//') && !path.includes('\\');
    return local ? path : NEXT_FALLBACK;
  } catch {
    return NEXT_FALLBACK;
  }
}

/** Checks sign-in and permission before the handler; signed-out page requests go to /login?next=…. */
export function guard(ctx: Context, action: RouteDef['action']): boolean {
  if (action === 'public') return true;
  const user = ctx.state.user as SessionUser | undefined;
  if (!user) {
    // HEAD is GET without the body (and is routed with it): it must get the same redirect.
    if ((ctx.method === 'GET' || ctx.method === 'HEAD') && !isXhr(ctx)) {
      ctx.redirect(`/login?next=${encodeURIComponent(safeNext(ctx.originalUrl))}`);
      return false;
    }
    throw new UnauthorizedError();
  }
  if (action !== 'authenticated' && !can(user.role, action)) throw new ForbiddenError();
  return true;
}

/**
 * `guard`, except that a form sent again (the same key and fields) by a user who may no longer do what it
 * does, and whose first sending was admitted, gets the first sending's answer rather than 403: an admin
 * who made themselves an editor lost the right to change roles by that very change, whose answer was
 * lost. Nothing is changed again: the gateway answers a key it has seen with its first outcome.
 */
async function guardOrResent(ctx: RouterContext, def: RouteDef, deps: AppDeps): Promise<boolean> {
  try {
    return guard(ctx, def.action);
  } catch (error) {
    const resent =
      error instanceof ForbiddenError && def.method === 'POST' && (await resendsAnAdmittedChange(ctx, deps));
    if (!resent) throw error;
    return true;
  }
}

export function mountRoutes(router: Router, routes: readonly RouteDef[], deps: AppDeps): void {
  for (const def of routes) {
    const handler = async (ctx: RouterContext) => {
      if (!(await guardOrResent(ctx, def, deps))) return;
      validateRouteParams(ctx.params);
      await def.handler(ctx, deps);
    };
    if (def.method === 'GET') router.get(def.path, handler);
    else router.post(def.path, handler);
  }
}
