import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { io, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClient } from '../support/test-client.ts';
import { requestFrom, signInFrom } from './support/from-address.ts';
import { Instance } from './support/instances.ts';
import { startNginx, type Service } from './support/services.ts';

/**
 * Rivals behind a real reverse proxy that does not pass the browser's Host on: nginx sends the instance's
 * own address as Host and names the public site in X-Forwarded-Host (Apache's default, and a common
 * nginx set-up). Forms and the Socket.IO handshake must follow one origin rule (web/site-origin.server.ts):
 * the handshake compared Origin with Host only, so live updates were refused while forms worked, and an
 * Origin naming the instance's own address was let in. Without TRUST_PROXY, forwarded headers a client
 * sends count for nothing. One embedded instance per setting: no Postgres or Redis is needed.
 */
const ADMIN_EMAIL = 'admin@proxy-origin.test';
const ADMIN_PASSWORD = 'proxy-origin-password-0123';

async function startApp(name: string, trustProxy: string) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `rivals-${name}-`));
  const app = await Instance.start(name, {
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    DEMO_DATA: 'false',
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    TRUST_PROXY: trustProxy,
  }).catch(async (error: unknown) => {
    // An instance that could not start (no browser bundle built, say) leaves no data folder behind.
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  });
  return {
    app,
    async stop() {
      await app.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** nginx that rewrites Host to the instance's address and names the site in X-Forwarded-Host. */
function rewritingProxy(appPort: number, proto: 'https' | 'http') {
  return startNginx([appPort], {
    proxySettings: `
      proxy_http_version 1.1;
      proxy_set_header Host 127.0.0.1:${appPort};
      proxy_set_header X-Forwarded-Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto ${proto};
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;`,
  });
}

/** Signs the admin in through `client`, waiting for the user list to have caught up after start. */
async function signInAdmin(client: TestClient): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await client.signIn(ADMIN_EMAIL, ADMIN_PASSWORD);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** Opens a Socket.IO connection as the browser's page would; `refused` is the server's reason, if any. */
function openSocket(
  url: string,
  headers: Record<string, string>,
): Promise<{ socket: Socket; refused?: string }> {
  const socket = io(url, {
    path: '/socket.io',
    transports: ['websocket'],
    reconnection: false,
    extraHeaders: headers,
  });
  return new Promise((resolve) => {
    socket.once('connect', () => resolve({ socket }));
    socket.once('connect_error', (error: Error) => resolve({ socket, refused: error.message }));
  });
}

const addCompetitor = (client: TestClient, name: string, origin?: string) =>
  client.postForm(
    '/competitors/new',
    {
      _idempotency_key: randomUUID(),
      name,
      website: '',
      segmentId: 'smb',
      threat: 'medium',
      headquarters: '',
    },
    origin === undefined ? {} : { origin },
  );

describe.each([
  { trustProxy: 'true', scheme: 'https', cookiePrefix: '__Host-' },
  { trustProxy: 'http', scheme: 'http', cookiePrefix: '' },
] as const)(
  'TRUST_PROXY=$trustProxy behind a proxy that rewrites Host',
  ({ trustProxy, scheme, cookiePrefix }) => {
    let instance: Awaited<ReturnType<typeof startApp>> | undefined;
    let nginx: Service | undefined;
    let appPort = 0;
    let proxyUrl = '';
    let site = '';
    const sockets: Socket[] = [];

    beforeAll(async () => {
      instance = await startApp(`proxy-origin-${trustProxy}`, trustProxy);
      appPort = instance.app.port;
      nginx = await rewritingProxy(appPort, scheme);
      proxyUrl = `http://127.0.0.1:${nginx.port}`;
      // The address browsers use: nginx's, over TLS when a TLS-terminating proxy is trusted.
      site = `${scheme}://127.0.0.1:${nginx.port}`;
    }, 240_000);

    afterAll(async () => {
      for (const socket of sockets) socket.close();
      await nginx?.destroy();
      await instance?.stop();
    }, 60_000);

    it('the site itself, through the proxy: the page loads, a form posts, the socket hears the change', async () => {
      const client = new TestClient(proxyUrl, site);
      await signInAdmin(client);
      expect(client.cookies.has(`${cookiePrefix}rivals_session`)).toBe(true);

      const { socket, refused } = await openSocket(proxyUrl, { Cookie: client.cookieHeader(), Origin: site });
      sockets.push(socket);
      // Before: "forbidden origin" (Origin compared with the Host nginx sent, the instance's address).
      expect(refused).toBeUndefined();
      const heard = new Promise<unknown>((resolve) => socket.once('change', resolve));

      const added = await addCompetitor(client, `Proxied ${trustProxy}`);
      expect(added.status).toBe(302);
      // Redirects name a path, never a scheme or host taken from a header: the browser stays where it is.
      expect(added.headers.get('location')).toMatch(/^\/[^/]/);
      expect(await heard).toMatchObject({ touched: [expect.anything()] });
    });

    it('another origin is refused on forms and on the handshake', async () => {
      const client = new TestClient(proxyUrl, site);
      await signInAdmin(client);
      const foreign = [
        `${scheme}://evil.example`,
        // The instance's own address, which nginx sends as Host: not where browsers are. Before, the
        // handshake let it in.
        `${scheme}://127.0.0.1:${appPort}`,
        // The right host over the other scheme.
        `${scheme === 'https' ? 'http' : 'https'}://127.0.0.1:${nginx?.port}`,
        'null',
      ];
      for (const origin of foreign) {
        expect((await addCompetitor(client, `Foreign ${origin}`, origin)).status, origin).toBe(403);
        const { socket, refused } = await openSocket(proxyUrl, {
          Cookie: client.cookieHeader(),
          Origin: origin,
        });
        sockets.push(socket);
        expect(refused, origin).toBe('forbidden origin');
      }
      // A client's own X-Forwarded-Host is replaced by nginx's: it cannot name another site as ours.
      const claimed = { 'X-Forwarded-Host': 'evil.example' };
      const form = await client.postForm(
        '/logout',
        {},
        { origin: `${scheme}://evil.example`, headers: claimed },
      );
      expect(form.status).toBe(403);
      const { socket, refused } = await openSocket(proxyUrl, {
        Cookie: client.cookieHeader(),
        Origin: `${scheme}://evil.example`,
        ...claimed,
      });
      sockets.push(socket);
      expect(refused).toBe('forbidden origin');
    });

    it('sign-in limits count the address nginx appends, whatever X-Forwarded-For the client sends', async () => {
      const port = nginx?.port ?? 0;
      const options = { origin: site };
      // Repeated, malformed and empty claims, each time another one: none of them is the address counted.
      for (let i = 0; i < 20; i++) {
        const headers = { 'X-Forwarded-For': [`10.0.${i}.1`, `garbage-${i}, ,`, ''] };
        expect(
          await signInFrom(port, '127.0.0.2', `nobody${i}@proxy.test`, 'wrong-password', {
            ...options,
            headers,
          }),
        ).toBe(401);
      }
      expect(await signInFrom(port, '127.0.0.2', ADMIN_EMAIL, ADMIN_PASSWORD, options)).toBe(429);
      expect(await signInFrom(port, '127.0.0.3', ADMIN_EMAIL, ADMIN_PASSWORD, options)).toBe(302);
    });
  },
);

describe('without TRUST_PROXY, forwarded headers a client sends count for nothing', () => {
  let instance: Awaited<ReturnType<typeof startApp>> | undefined;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    instance = await startApp('proxy-origin-off', 'false');
  }, 240_000);

  afterAll(async () => {
    for (const socket of sockets) socket.close();
    await instance?.stop();
  }, 60_000);

  it('X-Forwarded-Host and X-Forwarded-Proto do not make another origin ours', async () => {
    const url = instance?.app.url ?? '';
    const client = new TestClient(url);
    await signInAdmin(client);
    expect(client.cookies.has('rivals_session')).toBe(true);
    const forwarded = { 'X-Forwarded-Host': 'rivals.example', 'X-Forwarded-Proto': 'https' };
    for (const origin of [
      'https://rivals.example',
      'http://rivals.example',
      url.replace('http:', 'https:'),
    ]) {
      const form = await client.postForm('/logout', {}, { origin, headers: forwarded });
      expect(form.status, origin).toBe(403);
      const { socket, refused } = await openSocket(url, {
        Cookie: client.cookieHeader(),
        Origin: origin,
        ...forwarded,
      });
      sockets.push(socket);
      expect(refused, origin).toBe('forbidden origin');
    }
    // The site's own origin still works, with the same headers sent along.
    const { socket, refused } = await openSocket(url, {
      Cookie: client.cookieHeader(),
      Origin: url,
      ...forwarded,
    });
    sockets.push(socket);
    expect(refused).toBeUndefined();
    expect((await addCompetitor(client, 'Direct')).status).toBe(302);
  });

  it('X-Forwarded-Proto and X-Forwarded-Host change no cookie and no redirect address', async () => {
    const port = instance?.app.port ?? 0;
    const forwarded = { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'rivals.example' };
    const page = await requestFrom(port, '127.0.0.1', '/login', { headers: forwarded });
    const lines = page.headers['set-cookie'] ?? [];
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect(line).toMatch(/^rivals_/);
      expect(line.toLowerCase()).not.toMatch(/; secure/);
    }
    expect(page.headers['strict-transport-security']).toBeUndefined();
    const home = await requestFrom(port, '127.0.0.1', '/', { headers: forwarded });
    expect(home.status).toBe(302);
    expect(home.headers.location).toBe('/competitors');
  });

  it('a made-up X-Forwarded-For does not evade the sign-in limits', async () => {
    const port = instance?.app.port ?? 0;
    for (let i = 0; i < 20; i++) {
      const headers = { 'X-Forwarded-For': `10.1.${i}.1` };
      expect(
        await signInFrom(port, '127.0.0.2', `nobody${i}@proxy.test`, 'wrong-password', { headers }),
      ).toBe(401);
    }
    const fresh = { 'X-Forwarded-For': '10.2.0.1' };
    expect(await signInFrom(port, '127.0.0.2', ADMIN_EMAIL, ADMIN_PASSWORD, { headers: fresh })).toBe(429);
    expect(await signInFrom(port, '127.0.0.3', ADMIN_EMAIL, ADMIN_PASSWORD)).toBe(302);
  });
});
