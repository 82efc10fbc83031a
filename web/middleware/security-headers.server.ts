import { randomBytes, randomFillSync } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet from 'helmet';
import type { Middleware } from 'koa';

type ResponseWithLocals = ServerResponse & { locals?: { cspNonce?: string } };
const nonceOf = (_req: IncomingMessage, res: ServerResponse) =>
  `'nonce-${(res as ResponseWithLocals).locals?.cspNonce ?? ''}'`;

/** What helmet does to a response: headers set (a value may contain the nonce) and headers removed. */
type HeaderOp = { set: string; parts: string[] } | { remove: string };

/**
 * Helmet's headers depend on the request only through the nonce, so helmet runs once, at start-up, on a
 * recording response with a marker nonce; each request then replays the recorded headers with its own
 * nonce in place of the marker (no per-request directive building, no promise around a connect
 * middleware). Helmet stays the single source of the policy.
 */
function recordHelmet(options: Parameters<typeof helmet>[0]): HeaderOp[] {
  const marker = `nonce-marker-${randomBytes(12).toString('hex')}`;
  const ops: HeaderOp[] = [];
  const res = {
    locals: { cspNonce: marker },
    setHeader(name: string, value: string | number | readonly string[]) {
      ops.push({ set: name, parts: String(value).split(marker) });
      return res;
    },
    removeHeader(name: string) {
      ops.push({ remove: name });
    },
    getHeader: () => undefined,
  };
  let error: Error | undefined;
  helmet(options)({} as IncomingMessage, res as unknown as ServerResponse, (e?: unknown) => {
    if (e) error = e instanceof Error ? e : new Error('helmet failed');
  });
  if (error) throw error;
  return ops;
}

const NONCE_BYTES = 16;
const NONCES_PER_FILL = 256;

/**
 * Nonces of 16 fresh random bytes each, cut from one CSPRNG fill per 256 requests (as Node's own
 * randomUUID does): a `randomBytes` call per request cost more than replaying all the headers. No byte
 * is ever used twice.
 */
export function nonceSource(): () => string {
  const pool = Buffer.alloc(NONCE_BYTES * NONCES_PER_FILL);
  let offset = pool.length;
  return () => {
    if (offset >= pool.length) {
      randomFillSync(pool);
      offset = 0;
    }
    const nonce = pool.toString('base64', offset, offset + NONCE_BYTES);
    offset += NONCE_BYTES;
    return nonce;
  };
}

/**
 * A fresh nonce per request and a strict Content-Security-Policy: scripts run only with the nonce
 * (and what they load, via 'strict-dynamic'); no inline styles, no plugins, no framing. HSTS only when
 * we know the site is served over HTTPS.
 */
export function securityHeaders(options: { https: boolean }): Middleware {
  const ops = recordHelmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: [nonceOf, "'strict-dynamic'"],
        styleSrc: ["'self'", nonceOf],
        imgSrc: ["'self'", 'data:'],
        fontSrc: ["'self'"],
        connectSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'none'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        upgradeInsecureRequests: options.https ? [] : null,
      },
    },
    strictTransportSecurity: options.https ? { maxAge: 31_536_000, includeSubDomains: true } : false,
    crossOriginEmbedderPolicy: false,
    referrerPolicy: { policy: 'same-origin' },
  });
  const nextNonce = nonceSource();
  // Not async: nothing runs after `next`, so the chain's promise is passed on as it is.
  return (ctx, next) => {
    const nonce = nextNonce();
    ctx.state.nonce = nonce;
    const res = ctx.res;
    for (const op of ops) {
      if ('remove' in op) res.removeHeader(op.remove);
      else res.setHeader(op.set, op.parts.length === 1 ? (op.parts[0] as string) : op.parts.join(nonce));
    }
    return next();
  };
}
