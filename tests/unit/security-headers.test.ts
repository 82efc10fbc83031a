import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';
import koaHelmet from 'koa-helmet';
import { afterAll, describe, expect, it } from 'vitest';
import { nonceSource, securityHeaders } from '#web/middleware/security-headers.server.ts';

/**
 * The security headers are helmet's, recorded once and replayed per request with a fresh nonce
 * (issue 13, item 4). They must be exactly what helmet itself sets per request with the same policy,
 * apart from the nonce, which differs on every request and is the one the page renders with.
 */

type WithLocals = ServerResponse & { locals?: { cspNonce?: string } };
const nonceOf = (_req: IncomingMessage, res: ServerResponse) =>
  `'nonce-${(res as WithLocals).locals?.cspNonce ?? ''}'`;

/** The policy as it was applied before: koa-helmet on every request. */
function perRequestHelmet(https: boolean): Koa.Middleware {
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
        upgradeInsecureRequests: https ? [] : null,
      },
    },
    strictTransportSecurity: https ? { maxAge: 31_536_000, includeSubDomains: true } : false,
    crossOriginEmbedderPolicy: false,
    referrerPolicy: { policy: 'same-origin' },
  });
  return async (ctx, next) => {
    const nonce = randomBytes(16).toString('base64');
    ctx.state.nonce = nonce;
    (ctx.res as WithLocals).locals = { cspNonce: nonce };
    await helmet(ctx, next);
  };
}

const servers: Server[] = [];
afterAll(() => Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve)))));

async function headersOf(
  middleware: Koa.Middleware,
): Promise<{ nonce: string; headers: Record<string, string> }[]> {
  const app = new Koa();
  app.use(middleware);
  app.use((ctx) => {
    ctx.set('X-Test-Nonce', String(ctx.state.nonce));
    ctx.body = 'ok';
  });
  const server = createServer(app.callback()).listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const answers = [];
  for (let i = 0; i < 2; i++) {
    const response = await fetch(url);
    const headers = Object.fromEntries(
      [...response.headers].filter(
        ([name]) => !['date', 'content-length', 'connection', 'keep-alive'].includes(name),
      ),
    );
    const nonce = headers['x-test-nonce'] ?? '';
    delete headers['x-test-nonce'];
    answers.push({ nonce, headers });
  }
  return answers;
}

const withoutNonce = (a: { nonce: string; headers: Record<string, string> }) =>
  Object.fromEntries(Object.entries(a.headers).map(([k, v]) => [k, v.split(a.nonce).join('NONCE')]));

describe.each([false, true])('security headers (https: %s)', (https) => {
  it('are exactly helmet per request, with a fresh nonce each time that the page gets too', async () => {
    const replayed = await headersOf(securityHeaders({ https }));
    const reference = await headersOf(perRequestHelmet(https));
    const [first, second] = replayed;
    expect(first?.nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/);
    expect(first?.nonce).not.toBe(second?.nonce);
    for (const answer of replayed) {
      const csp = answer.headers['content-security-policy'] ?? '';
      expect(csp).toContain(`script-src 'nonce-${answer.nonce}' 'strict-dynamic'`);
      expect(csp).toContain(`style-src 'self' 'nonce-${answer.nonce}'`);
      expect(answer.headers['x-powered-by']).toBeUndefined();
      expect(withoutNonce(answer)).toEqual(withoutNonce(reference[0] as (typeof reference)[number]));
    }
    expect('strict-transport-security' in (first?.headers ?? {})).toBe(https);
  });
});

describe('nonces', () => {
  it('are 16 bytes each, and none repeats across several pool refills', () => {
    const next = nonceSource();
    const seen = new Set<string>();
    for (let i = 0; i < 1_000; i++) {
      const nonce = next();
      expect(Buffer.from(nonce, 'base64')).toHaveLength(16);
      seen.add(nonce);
    }
    expect(seen.size).toBe(1_000);
  });
});
