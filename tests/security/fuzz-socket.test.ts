import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestClient } from '#tests/support/test-client.ts';
import { createFigures, headerString, hostileString } from './support/hostile.ts';
import {
  handshakeResult,
  securityBackends,
  startSecurityApp,
  type SecurityApp,
} from './support/security-app.ts';

/**
 * Fuzzing the Socket.IO handshake on both backends: cookie, Origin, auth payload and query, over
 * WebSocket and long-polling, plus raw Engine.IO requests. Every attempt ends in a connection or a
 * refusal (never an unhandled error: vitest fails the run on one), no connection without a valid
 * session from our own origin, and the server answers afterwards.
 */
const RUNS = Number(process.env.SECURITY_FUZZ_RUNS ?? 25);
const REFUSALS = new Set(['sign in first', 'forbidden origin']);

describe.each(securityBackends)('socket handshake fuzz on %s', (backend) => {
  let app: SecurityApp;
  let viewer: TestClient;
  const figures = createFigures();

  beforeAll(async () => {
    app = await startSecurityApp(backend);
    viewer = await app.client('viewer');
  });
  afterAll(async () => {
    figures.print(backend);
    await app?.close();
  });

  it('cookie, origin, auth and query: a refusal or, with a real session from our origin, a connection', async () => {
    const session = viewer.cookieHeader();
    const cookie = fc.oneof(
      headerString,
      headerString.map((v) => `rivals_session=${v}`),
      headerString.map((v) => `${session}; rivals_session=${v}`),
      fc.constant(session),
    );
    // Engine.IO's own parameters are the transport's, not the application's.
    const queryKey = fc
      .string({ minLength: 1, maxLength: 8 })
      .filter((k) => !['EIO', 'transport', 'sid', 't', 'j', 'b64'].includes(k));
    const origin = fc.oneof(fc.constant(undefined), fc.constant(app.url), headerString);
    const handshake = fc.record({
      cookie,
      origin,
      auth: fc.option(fc.dictionary(hostileString, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }), {
        nil: undefined,
      }),
      query: fc.option(fc.dictionary(queryKey, headerString, { maxKeys: 4 }), {
        nil: undefined,
      }),
      transport: fc.constantFrom('websocket' as const, 'polling' as const),
    });
    let unexpected = 0;
    let bypass = 0;
    await fc.assert(
      fc.asyncProperty(handshake, async (h) => {
        const socket = app.socket(h);
        const result = await handshakeResult(socket);
        socket.disconnect();
        const legitimate =
          h.cookie
            .split(';')
            .some((part) => session.includes(part.trim()) && part.includes('rivals_session=')) &&
          (h.origin === undefined || h.origin === app.url);
        if (result.connected && !legitimate) bypass++;
        if (!result.connected && !REFUSALS.has(result.message)) unexpected++;
        figures.record(
          `socket-${h.transport}`,
          result.connected || REFUSALS.has(result.message) ? 101 : 500,
          JSON.stringify(h),
        );
        return !(result.connected && !legitimate) && (result.connected || REFUSALS.has(result.message));
      }),
      { numRuns: RUNS * 4 },
    );
    expect({ unexpected, bypass }).toEqual({ unexpected: 0, bypass: 0 });
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
  });

  it('raw Engine.IO requests answer < 500', async () => {
    const request = fc.record({
      EIO: fc.oneof(fc.constant('4'), hostileString),
      transport: fc.oneof(fc.constantFrom('polling', 'websocket'), hostileString),
      sid: fc.option(hostileString, { nil: undefined }),
      method: fc.constantFrom('GET', 'POST'),
      body: fc.oneof(fc.constantFrom('40', '2', '4', '42["change",{}]', '40{"token":1}'), hostileString),
      cookie: headerString,
    });
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const params = new URLSearchParams({ EIO: r.EIO, transport: r.transport });
        if (r.sid !== undefined) params.set('sid', r.sid);
        const response = await fetch(`${app.url}/socket.io/?${params.toString()}`, {
          method: r.method,
          headers: { Cookie: r.cookie, 'Content-Type': 'text/plain;charset=UTF-8' },
          ...(r.method === 'POST' ? { body: r.body } : {}),
        });
        await response.arrayBuffer();
        figures.record('engine-io-raw', response.status, JSON.stringify(r));
        return response.status < 500;
      }),
      { numRuns: RUNS * 2 },
    );
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
  });
});
