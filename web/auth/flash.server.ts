import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import type { Flash } from '../pages/page-context.ts';
import { hmac, safeEqual, setCookie, type CookieNames } from './cookies.server.ts';

/** The longest text a flash keeps; the cookie holding it must stay well under browsers' 4 kB. */
const FLASH_TEXT_MAX = 500;

const flashSchema = z
  .array(z.object({ kind: z.enum(['success', 'error', 'info']), text: z.string().max(FLASH_TEXT_MAX) }))
  .max(5);

/**
 * A longer text is cut (ending in "…", never in half a character), not left for `readFlash` to refuse:
 * a refusal naming three long competitor names would otherwise vanish, and the user hear nothing.
 */
function fitText(text: string): string {
  if (text.length <= FLASH_TEXT_MAX) return text;
  const cut = text.slice(0, FLASH_TEXT_MAX - 1);
  return `${/[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}

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
    // A script's JSON request (GET /session, sent without X-Requested-With) shows no message: it must
    // not take one from the page the browser is about to show.
    const isPage =
      ctx.method === 'GET' &&
      ctx.get('X-Requested-With') !== 'XMLHttpRequest' &&
      ctx.accepts(['html', 'json']) !== 'json' &&
      !ctx.path.startsWith('/assets/');
    if (raw && isPage) {
      ctx.state.flash = readFlash(raw, secret);
      setCookie(ctx, cookies.flash, null, { https });
    }
    ctx.state.addFlash = (flash: Flash) => {
      const pending = [
        ...((ctx.state.pendingFlash as Flash[] | undefined) ?? []),
        { ...flash, text: fitText(flash.text) },
      ];
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
