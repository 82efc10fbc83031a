import type { IncomingHttpHeaders } from 'node:http';
import type { Config } from '#infra/config.ts';

/** TRUST_PROXY: `true` (TLS-terminating proxy), `'http'` (plain-HTTP proxy) or `false` (none). */
export type TrustProxy = Config['TRUST_PROXY'];

/** A Host header's shape: a name or an address, and a port; nothing else (no path, no user info). */
const HOST = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:[0-9]{1,5})?$/i;

/** The last of a header's comma-separated values (Node joins repeated headers with ", "). */
function lastValue(header: string | string[] | undefined): string | undefined {
  const joined = Array.isArray(header) ? header.join(',') : header;
  if (joined === undefined || joined.trim() === '') return undefined;
  return joined.split(',').at(-1)?.trim();
}

/**
 * The origin browsers reach this site at (`https://rivals.example`), from the request's own headers:
 * the one rule the HTTP side (CSRF, where to return after sign-in) and the Socket.IO handshake share.
 *
 * - The scheme is the operator's word, not a header's: `https` behind a TLS-terminating proxy
 *   (`TRUST_PROXY=true`), `http` otherwise. X-Forwarded-Proto is not read, so a client cannot pick it.
 * - The host is the trusted proxy's X-Forwarded-Host when it sends one (a proxy that rewrites Host to
 *   the instance's address, as Apache does by default, still names the public site there), else Host.
 *   Only the last value counts: like X-Forwarded-For, a proxy that appends puts its own last, and what
 *   a client sent before it is the client's claim. Without TRUST_PROXY, X-Forwarded-Host is ignored.
 * - Undefined when there is no host, or it is not a bare `name[:port]` (a path, user info, garbage): no
 *   Origin can match it then.
 */
export function siteOrigin(headers: IncomingHttpHeaders, trustProxy: TrustProxy): string | undefined {
  const forwarded = trustProxy === false ? undefined : lastValue(headers['x-forwarded-host']);
  const host = forwarded ?? headers.host;
  if (!host || !HOST.test(host)) return undefined;
  const scheme = trustProxy === true ? 'https' : 'http';
  try {
    // Lower case, and without the scheme's default port: as browsers write an Origin.
    return new URL(`${scheme}://${host}`).origin;
  } catch {
    return undefined;
  }
}

/**
 * True when a request comes from our own site as the browser tells it: Sec-Fetch-Site, when sent, must
 * be `same-origin`; Origin, when sent, must be exactly `siteOrigin` (a sandboxed page sends `null`,
 * which never matches). A request with neither is not from a browser's cross-site page (browsers send
 * Origin on every POST and WebSocket handshake), and the CSRF token still guards it.
 */
export function fromOwnSite(headers: IncomingHttpHeaders, trustProxy: TrustProxy): boolean {
  const site = headers['sec-fetch-site'];
  if (site && site !== 'same-origin') return false;
  const origin = headers.origin;
  if (origin === undefined) return true;
  const own = siteOrigin(headers, trustProxy);
  if (!own) return false;
  try {
    return new URL(origin).origin === own;
  } catch {
    return false;
  }
}
