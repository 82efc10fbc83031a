import type { RouterContext } from '@koa/router';
import { AppError } from '#infra/errors.ts';
import type { AppDeps } from '../app-deps.server.ts';
import { validateRouteParams } from '../input.server.ts';
import { guard, type RouteDef } from '../routing.server.ts';

/** The part of a page address a component call may name as its view: a same-site path and query. */
export const viewPattern = /^\/(?!\/)[^\\\s]*$/;

/** `/competitors/:id` against `/competitors/42`: the parameters, or undefined when it does not match. */
export function matchPath(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/');
  const have = path.split('/');
  if (want.length !== have.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, part] of want.entries()) {
    const value = have[i] ?? '';
    if (part.startsWith(':')) {
      if (value === '') return undefined;
      try {
        params[part.slice(1)] = decodeURIComponent(value);
      } catch {
        return undefined;
      }
    } else if (part !== value) return undefined;
  }
  return params;
}

/**
 * Renders the page a component call came from, as that page's own refresh would (`X-Requested-With`), so
 * the answer can carry the fresh regions and the page needs no second request. The page's route runs as
 * it would for a GET — same sign-in and permission checks, same parameter validation, same query — on a
 * view of the request that only differs in address and headers; its answer is captured, not sent.
 * Undefined when the address is not a page of `routes`, or the page does not render (the client then
 * refreshes as it would without the answer's HTML).
 */
export async function renderView(
  ctx: RouterContext,
  deps: AppDeps,
  routes: readonly RouteDef[],
  view: string,
): Promise<string | undefined> {
  const url = new URL(view, 'http://view.invalid');
  const found = routes
    .filter((r) => r.method === 'GET')
    .map((r) => ({ route: r, params: matchPath(r.path, url.pathname) }))
    .find((m) => m.params !== undefined);
  if (!found?.params) return undefined;
  const captured: { status: number; type: string; body: unknown } = {
    status: 404,
    type: '',
    body: undefined,
  };
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    query[key] = values.length === 1 ? (values[0] ?? '') : values;
  }
  const viewCtx = Object.create(ctx, {
    method: { value: 'GET' },
    path: { value: url.pathname },
    url: { value: `${url.pathname}${url.search}` },
    originalUrl: { value: `${url.pathname}${url.search}` },
    query: { value: query },
    params: { value: found.params },
    get: {
      value: (name: string) => (name.toLowerCase() === 'x-requested-with' ? 'XMLHttpRequest' : ctx.get(name)),
    },
    set: { value: () => undefined },
    redirect: { value: () => undefined },
    status: { get: () => captured.status, set: (v: number) => (captured.status = v) },
    type: { get: () => captured.type, set: (v: string) => (captured.type = v) },
    body: { get: () => captured.body, set: (v: unknown) => (captured.body = v) },
  }) as RouterContext;
  try {
    if (!guard(viewCtx, found.route.action)) return undefined;
    validateRouteParams(found.params);
    await found.route.handler(viewCtx, deps);
  } catch (error) {
    // The change is saved whatever happens here: the answer says so, and the page refreshes itself.
    // A page gone meanwhile (deleted) or not this user's to see is expected; anything else is logged.
    if (!(error instanceof AppError)) deps.log.warn({ err: error, view }, 'could not render the view');
    return undefined;
  }
  const html = captured.status === 200 && captured.type.startsWith('text/html') ? captured.body : undefined;
  // renderHtml answers UTF-8 bytes (see render.server.tsx); a route may still set a string.
  if (Buffer.isBuffer(html)) return html.toString('utf8');
  return typeof html === 'string' ? html : undefined;
}
