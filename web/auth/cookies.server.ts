import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';

/** Cookie names: `__Host-` prefixed (Secure, no Domain, Path=/) when served over HTTPS. */
export function cookieNames(https: boolean) {
  const prefix = https ? '__Host-' : '';
  return { session: `${prefix}rivals_session`, anon: `${prefix}rivals_anon`, flash: `${prefix}rivals_flash` };
}

export type CookieNames = ReturnType<typeof cookieNames>;

/** The anonymous cookie: a random basis for the form tokens of a browser not signed in. */
export const newAnonToken = () => randomBytes(24).toString('base64url');
export const anonTokenPattern = /^[\w-]{20,64}$/;

const TAG_LENGTH = 24;

/**
 * The anonymous cookie a sign-in leaves (decision 0027): fresh randomness, so no token from before can be
 * derived again, followed by a tag naming the form token it replaced, so a copy of that form sent later
 * (a double click whose first answer arrived, a retried POST, a second tab) is known for what it is.
 */
export function anonTokenReplacing(secret: string, formToken: string): string {
  const fresh = randomBytes(18).toString('base64url');
  return `${fresh}${hmac(secret, `replaced:${fresh}:${formToken}`).slice(0, TAG_LENGTH)}`;
}

/** Whether `anon` is the cookie a sign-in from the form with `formToken` left (anonTokenReplacing). */
export function anonTokenReplaced(secret: string, anon: string, formToken: string): boolean {
  if (anon.length !== 24 + TAG_LENGTH || !formToken) return false;
  const fresh = anon.slice(0, 24);
  return safeEqual(anon.slice(24), hmac(secret, `replaced:${fresh}:${formToken}`).slice(0, TAG_LENGTH));
}

export function setCookie(
  ctx: Context,
  name: string,
  value: string | null,
  options: { https: boolean; maxAgeMs?: number },
): void {
  // `https` (TRUST_PROXY) says browsers reach us over TLS, so Secure is right even when this request does
  // not show it: a health check or metrics scrape straight to the instance, or a proxy that sends no
  // X-Forwarded-Proto. Koa refuses Secure cookies on such requests, which made every one of them a 500.
  if (options.https) ctx.cookies.secure = true;
  ctx.cookies.set(name, value, {
    httpOnly: true,
    sameSite: 'lax',
    secure: options.https,
    path: '/',
    overwrite: true,
    ...(options.maxAgeMs ? { maxAge: options.maxAgeMs } : {}),
  });
}

export const hmac = (secret: string, value: string): string =>
  createHmac('sha256', secret).update(value).digest('base64url');

/**
 * `hmac(secret, value)` for values asked for again and again: a session's token on each of its requests
 * (its row id and its form token). The last `max` answers (default 10,000) are kept, so a repeated value
 * costs a Map lookup instead of a new HMAC, about 20 µs of CPU each on Node 20 and two per signed-in
 * request. Bounded: past `max`, the longest kept goes (it is computed again if asked for).
 */
export function memoHmac(secret: string, max = 10_000): MemoHmac {
  const kept = new Map<string, string>();
  const of = (value: string) => {
    let mac = kept.get(value);
    if (mac === undefined) {
      mac = hmac(secret, value);
      if (kept.size >= max) kept.delete(kept.keys().next().value as string);
      kept.set(value, mac);
    }
    return mac;
  };
  return Object.defineProperty(of, 'size', { get: () => kept.size }) as MemoHmac;
}

export type MemoHmac = ((value: string) => string) & { readonly size: number };

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
