import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Middleware } from 'koa';
import koaHelmet from 'koa-helmet';

type ResponseWithLocals = ServerResponse & { locals?: { cspNonce?: string } };
const nonceOf = (_req: IncomingMessage, res: ServerResponse) =>
  `'nonce-${(res as ResponseWithLocals).locals?.cspNonce ?? ''}'`;

/**
 * A fresh nonce per request and a strict Content-Security-Policy: scripts run only with the nonce
 * (and what they load, via 'strict-dynamic'); no inline styles, no plugins, no framing. HSTS only when
 * we know the site is served over HTTPS.
 */
export function securityHeaders(options: { https: boolean }): Middleware {
  const helmet = koaHelmet({
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
  return async (ctx, next) => {
    const nonce = randomBytes(16).toString('base64');
    ctx.state.nonce = nonce;
    (ctx.res as ResponseWithLocals).locals = { ...(ctx.res as ResponseWithLocals).locals, cspNonce: nonce };
    await helmet(ctx, next);
  };
}
