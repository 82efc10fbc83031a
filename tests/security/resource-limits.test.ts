import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import type { Socket as NetSocket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MAX_PENDING_PER_ADDRESS } from '#web/realtime/handshake-quota.server.ts';
import { bindSocketToSession } from '#web/realtime/socket-session.server.ts';
import { MAX_SOCKET_MESSAGE_BYTES } from '#web/realtime/realtime.server.ts';
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

  it('a connection asks to join once: a burst of joins on it reads one session and makes no second socket', async () => {
    // Socket.IO makes a socket for each join (a CONNECT packet) that comes while an earlier one on the
    // connection is still being checked: a signed-in user got hundreds on one connection (past their
    // limit, each hearing every broadcast), and anyone, with any cookie, a session read per packet.
    const reads = vi.spyOn(bindSocketToSession, 'handshake');
    let joined = 0;
    const onJoin = () => joined++;
    app.realtime.io.on('connection', onJoin);
    try {
      for (const [who, cookie] of [
        ['signed in', editor.cookieHeader()],
        // A token of the right shape that names no session: read, and refused.
        ['not signed in', `rivals_session=${randomBytes(32).toString('base64url')}`],
      ]) {
        reads.mockClear();
        joined = 0;
        const socket = app.socket({ cookie });
        // After the client's own join: 200 more, each an Engine.IO message '0' (CONNECT to '/').
        socket.io.once('open', () => {
          for (let i = 0; i < 200; i++) socket.io.engine.write('0');
        });
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        socket.disconnect();
        expect(reads, who).toHaveBeenCalledTimes(1);
        expect(joined, who).toBeLessThanOrEqual(1);
      }
    } finally {
      app.realtime.io.off('connection', onJoin);
      reads.mockRestore();
    }
    // A socket that joins once, as our client does, still connects.
    const socket = app.socket({ cookie: editor.cookieHeader() });
    expect(await handshakeResult(socket)).toEqual({ connected: true, message: '' });
    socket.disconnect();
  });

  it('a socket cannot make the server hold binary data nobody reads: a binary packet closes its connection', async () => {
    // Our client sends no events, let alone binary ones. Socket.IO keeps a binary packet's attachments
    // (up to 10 frames of 1 MB) until the last one comes: 20 connections of one signed-in user held
    // 180 MB for as long as they stayed open, and anyone held as much until the join timed out.
    const socket = app.socket({ cookie: editor.cookieHeader() });
    expect(await handshakeResult(socket)).toEqual({ connected: true, message: '' });
    const closed = new Promise<string>((resolve) => socket.once('disconnect', resolve));
    // An event '5' with 10 attachments, then 9 of them, 100 kB each.
    socket.io.engine.write('510-["upload",{"_placeholder":true,"num":0}]');
    for (let i = 0; i < 9; i++) socket.io.engine.write(Buffer.alloc(100_000, 1));
    const outcome = await Promise.race([
      closed,
      new Promise((resolve) => setTimeout(() => resolve('still open'), 2_000)),
    ]);
    socket.disconnect();
    expect(outcome).toBe('transport close');
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
    const again = app.socket({ cookie: editor.cookieHeader() });
    expect(await handshakeResult(again)).toEqual({ connected: true, message: '' });
    again.disconnect();
  });

  it('a socket message larger than our client ever sends closes that connection only, at a limit far above what it sends', async () => {
    // What our client sends, measured: the join (CONNECT) is all it writes; heartbeat answers are 1 byte.
    const sent: number[] = [];
    const socket = app.socket({ cookie: editor.cookieHeader() });
    socket.io.engine.on('packetCreate', (packet: { type: string; data?: string | Buffer }) => {
      // Engine.IO writes a message as its type digit, then its data.
      if (packet.type === 'message') sent.push(1 + Buffer.byteLength(packet.data ?? ''));
    });
    expect(await handshakeResult(socket)).toEqual({ connected: true, message: '' });
    expect(sent.length).toBeGreaterThan(0);
    expect(Math.max(...sent) * 1_000).toBeLessThanOrEqual(MAX_SOCKET_MESSAGE_BYTES);
    expect(MAX_SOCKET_MESSAGE_BYTES).toBeLessThanOrEqual(64 * 1024);

    const other = app.socket({ cookie: editor.cookieHeader() });
    expect(await handshakeResult(other)).toEqual({ connected: true, message: '' });
    const outcome = (target: typeof socket) =>
      Promise.race([
        new Promise<string>((resolve) => target.once('disconnect', resolve)),
        new Promise<string>((resolve) => setTimeout(() => resolve('still open'), 1_500)),
      ]);
    // Within the limit (with room for the framing): read and ignored, as any event of no use to us.
    const small = outcome(socket);
    socket.emit('note', 'x'.repeat(MAX_SOCKET_MESSAGE_BYTES - 64));
    expect(await small).toBe('still open');
    // Over it (far below Socket.IO's 1 MB default): the connection is closed, not read on.
    const big = outcome(socket);
    socket.emit('note', 'x'.repeat(256 * 1024));
    expect(await big).toBe('transport close');
    // Only that one: the user's other socket stays, and a new one connects.
    expect(other.connected).toBe(true);
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
    const again = app.socket({ cookie: editor.cookieHeader() });
    expect(await handshakeResult(again)).toEqual({ connected: true, message: '' });
    expect(other.connected).toBe(true);
    for (const s of [socket, other, again]) s.disconnect();
  });

  /** A bare WebSocket upgrade of /socket.io, as anyone can send it: no cookie, and it never asks to join. */
  function bareUpgrade(query = ''): Promise<{ socket?: NetSocket; head?: Buffer; status: number }> {
    return new Promise((resolve, reject) => {
      const { hostname, port } = new URL(app.url);
      const upgrade = request({
        hostname,
        port,
        path: `/socket.io/?EIO=4&transport=websocket${query}`,
        headers: {
          Connection: 'Upgrade',
          Upgrade: 'websocket',
          'Sec-WebSocket-Version': '13',
          'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
        },
      });
      upgrade.on('upgrade', (response, socket, head) =>
        resolve({ socket, head, status: response.statusCode ?? 0 }),
      );
      upgrade.on('response', (response) => {
        response.resume();
        resolve({ status: response.statusCode ?? 0 });
      });
      upgrade.on('error', reject);
      upgrade.end();
    });
  }

  /** The Engine.IO session id in the first frame the server sends on a bare upgrade (`0{"sid":…}`). */
  function sessionIdOf(socket: NetSocket, head: Buffer = Buffer.alloc(0)): Promise<string> {
    return new Promise((resolve, reject) => {
      let bytes: Buffer = Buffer.alloc(0);
      const onData = (chunk: Buffer) => {
        bytes = Buffer.concat([bytes, chunk]);
        // A server's frame is not masked; its length is in the second byte, or the two after it.
        const short = (bytes[1] ?? 0) & 0x7f;
        const [start, length] = short === 126 ? [4, bytes.readUInt16BE(2)] : [2, short];
        if (bytes.length < start + length) return;
        socket.off('data', onData);
        const open = JSON.parse(bytes.subarray(start + 1, start + length).toString()) as { sid?: string };
        if (open.sid) resolve(open.sid);
        else reject(new Error(`no session id in ${bytes.toString()}`));
      };
      socket.on('data', onData);
      // What came with the upgrade's answer, if anything, is the frame's start.
      if (head.length > 0) onData(head);
    });
  }

  it("an upgrade that names an open connection's Engine.IO session is refused: it would skip the limit on connections not signed in", async () => {
    const first = await bareUpgrade();
    expect(first.status).toBe(101);
    try {
      const sid = await sessionIdOf(first.socket as NetSocket, first.head);
      const second = await bareUpgrade(`&sid=${encodeURIComponent(sid)}`);
      second.socket?.destroy();
      expect(second.status).toBe(400);
    } finally {
      first.socket?.destroy();
    }
  });

  it('one address cannot hold more than a few connections that are not signed in; a signed-in socket still connects once they close', async () => {
    const tries = await Promise.all(
      Array.from({ length: MAX_PENDING_PER_ADDRESS + 20 }, () => bareUpgrade()),
    );
    const held = tries.flatMap((t) => (t.socket ? [t.socket] : []));
    try {
      expect(held).toHaveLength(MAX_PENDING_PER_ADDRESS);
      expect(tries.filter((t) => !t.socket).every((t) => t.status >= 400 && t.status < 500)).toBe(true);
    } finally {
      for (const socket of held) socket.destroy();
    }
    let socket = app.socket({ cookie: editor.cookieHeader() });
    for (let attempt = 0; attempt < 50 && !(await handshakeResult(socket)).connected; attempt++) {
      socket.disconnect();
      await new Promise((resolve) => setTimeout(resolve, 100));
      socket = app.socket({ cookie: editor.cookieHeader() });
    }
    expect(socket.connected).toBe(true);
    socket.disconnect();
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
  });

  it('signed-in sockets stop counting against their address once bound: more of them than its limit of unbound ones connect from one address', async () => {
    // Many people behind one address (a proxy, an office's NAT), each with tabs open: only connections not
    // yet bound to a session are limited per address, so those already signed in never fill the limit.
    const perUser = Math.ceil((MAX_PENDING_PER_ADDRESS + 10) / 3);
    expect(perUser).toBeLessThan(MAX_SOCKETS_PER_USER);
    const people = [editor, await app.client('admin'), await app.client('viewer')];
    const sockets = [];
    for (const person of people) {
      const cookie = person.cookieHeader();
      // One person's tabs at a time, so fewer than the limit are ever waiting at once. A refused one is
      // tried again a few times, as a browser would: the test before may still be closing its connections.
      for (let tab = 0; tab < perUser; tab++) {
        let socket = app.socket({ cookie });
        for (let attempt = 0; attempt < 20 && !(await handshakeResult(socket)).connected; attempt++) {
          socket.disconnect();
          await new Promise((resolve) => setTimeout(resolve, 100));
          socket = app.socket({ cookie });
        }
        sockets.push(socket);
      }
    }
    expect(sockets.filter((socket) => !socket.connected)).toEqual([]);
    try {
      expect(sockets.length).toBeGreaterThan(MAX_PENDING_PER_ADDRESS);
      // …and a connection not signed in yet is still let in beside them.
      const bare = await bareUpgrade();
      bare.socket?.destroy();
      expect(bare.status).toBe(101);
    } finally {
      for (const socket of sockets) socket.disconnect();
    }
  });
});
