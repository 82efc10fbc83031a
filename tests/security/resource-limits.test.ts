import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SOCKETS_PER_USER } from '#web/realtime/socket-quota.server.ts';
import type { TestClient } from '#tests/support/test-client.ts';
import {
  handshakeResult,
  securityBackends,
  startSecuritySuite,
  type SecurityApp,
} from './support/security-app.ts';

/**
 * Resource exhaustion: what one user, or anyone, could pile up in a process until it could no longer
 * serve (file descriptors, memory).
 */
describe.each(securityBackends)('resource limits on %s', (backend) => {
  let app: SecurityApp;
  let editor: TestClient;

  beforeAll(async () => ({ app, editor } = await startSecuritySuite(backend)));
  afterAll(() => app?.close());

  it('one user cannot hold more live sockets than the limit; closing one lets another in', async () => {
    const cookie = editor.cookieHeader();
    const sockets = Array.from({ length: MAX_SOCKETS_PER_USER }, () => app.socket({ cookie }));
    const results = await Promise.all(sockets.map(handshakeResult));
    expect(results.filter((r) => r.connected)).toHaveLength(MAX_SOCKETS_PER_USER);

    const extra = app.socket({ cookie });
    expect(await handshakeResult(extra)).toEqual({
      connected: false,
      message: 'too many live connections; close some tabs of Rivals',
    });
    extra.disconnect();

    // Another user is not held back by this one.
    const admin = await app.client('admin');
    const other = app.socket({ cookie: admin.cookieHeader() });
    expect((await handshakeResult(other)).connected).toBe(true);
    other.disconnect();

    // The server counts a socket out when its connection closes.
    sockets[0]?.disconnect();
    let again = app.socket({ cookie });
    for (let attempt = 0; attempt < 50 && !(await handshakeResult(again)).connected; attempt++) {
      again.disconnect();
      await new Promise((resolve) => setTimeout(resolve, 100));
      again = app.socket({ cookie });
    }
    expect(again.connected).toBe(true);
    for (const socket of [...sockets, again]) socket.disconnect();
  });
});
