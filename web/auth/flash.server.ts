import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import type { Flash } from '../pages/page-context.ts';
import { hmac, safeEqual, setCookie, type CookieNames } from './cookies.server.ts';

const flashSchema = z
  .array(z.object({ kind: z.enum(['success', 'error', 'info']), text: z.string().max(500) }))
  .max(5);

/**
 * One-time messages across a redirect ("Competitor added"), in a signed cookie so they work before
 * sign-in too. Shown by the next full page; XHR refreshes leave them alone.
 */
export function flashMiddleware(options: {
  secret: string;
  https: boolean;
  cookies: CookieNames;
}): Middleware {
  const { secret, https, cookies } = options;
  return async (ctx, next) => {
    ctx.state.flash = [];
    const raw = ctx.cookies.get(cookies.flash);
    const isPage =
      ctx.method === 'GET' &&
      ctx.get('X-Requested-With') !== 'XMLHttpRequest' &&
      !ctx.path.startsWith('/assets/');
    if (raw && isPage) {
      ctx.state.flash = readFlash(raw, secret);
      setCookie(ctx, cookies.flash, null, { https });
    }
    ctx.state.addFlash = (flash: Flash) => {
      const pending = [...((ctx.state.pendingFlash as Flash[] | undefined) ?? []), flash];
      ctx.state.pendingFlash = pending;
      const value = Buffer.from(JSON.stringify(pending)).toString('base64url');
      setCookie(ctx, cookies.flash, `${value}.${hmac(secret, `flash:${value}`)}`, {
        https,
        maxAgeMs: 60_000,
      });
    };
    await next();
  };
}

function readFlash(raw: string, secret: string): Flash[] {
  const [value, signature] = raw.split('.');
  if (!value || !signature || !safeEqual(signature, hmac(secret, `flash:${value}`))) return [];
  try {
    return flashSchema.parse(JSON.parse(Buffer.from(value, 'base64url').toString('utf8')));
  } catch {
    return [];
  }
}

export const addFlash = (ctx: Context, flash: Flash): void =>
  (ctx.state.addFlash as (f: Flash) => void)(flash);
