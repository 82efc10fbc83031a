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

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
