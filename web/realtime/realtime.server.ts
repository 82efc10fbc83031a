import type { Server as HttpServer, IncomingMessage } from 'node:http';
import { createAdapter } from '@socket.io/redis-adapter';
import { Server, type DefaultEventsMap } from 'socket.io';
import type { Logger } from '#infra/logger.ts';
import { closeRedisClient, type Redis } from '#infra/redis.ts';
import { readSessionToken } from '../input.server.ts';
import { fromOwnSite, type TrustProxy } from '../site-origin.server.ts';
import type { SessionSignals } from '../auth/session-signals.server.ts';
import { sessionIdOf, type SessionOptions } from '../auth/sessions.server.ts';
import type { SessionUser } from '../pages/page-context.ts';
import { guardedAdapter } from './guarded-adapter.server.ts';
import { createHandshakeQuota } from './handshake-quota.server.ts';
import { createJoinOnce } from './join-once.server.ts';
import { bindSocketToSession } from './socket-session.server.ts';
import { textOnlyParser } from './text-only-parser.server.ts';
import { createSocketQuota } from './socket-quota.server.ts';

/** Everyone who may see the competitor list hears about changes to it. */
export const COMPETITORS_ROOM = 'competitors';
/**
 * Those who may read the audit log (editors and admins) hear that it has new lines, with nothing but
 * its position: a viewer's socket is never in it, and the lines are read over HTTP, by role.
 */
export const AUDIT_ROOM = 'audit';
/** Sent to browsers that may have missed broadcasts: they compare positions and refetch if behind. */
export const RESYNC_EVENT = 'resync';

/**
 * The largest message a socket may send, in bytes. Our client sends only the join (the CONNECT packet
 * `40`, 2 bytes: no auth payload, no events) and heartbeat answers (`3`); the most a proper one sends is
 * a handful of bytes, so 16 kB is thousands of times that. Socket.IO's default, 1 MB, let each
 * connection make the server take in and parse a megabyte per message. A larger message closes that
 * connection only (WebSocket close 1009, "message too big"), before it is read whole.
 */
export const MAX_SOCKET_MESSAGE_BYTES = 16 * 1024;

export interface SocketData {
  user?: SessionUser;
  /** The session row this socket lives by: sign-out, expiry, disable or a role change reach it. */
  sessionId?: string;
}

export type RealtimeServer = Server<DefaultEventsMap, DefaultEventsMap, DefaultEventsMap, SocketData>;

export interface Realtime {
  io: RealtimeServer;
  /**
   * Emits to a room on every instance. After `close` it does nothing: the Redis adapter's publish on a
   * closed client rejects with nobody to catch it (a worker stopped while its runner still broadcast).
   */
  broadcast(room: string, event: string, payload: unknown): void;
  close(): Promise<void>;
}

const refusal = (message: string) => new Error(message);

/**
 * Socket.IO for live updates. A connection must come from our own origin and carry a valid session;
 * it joins the rooms its role may read and stays bound to that session (socket-session.server.ts).
 * With Redis, the adapter fans broadcasts out across instances, so a worker process (no HTTP server)
 * can broadcast too.
 *
 * The handshake never throws: Socket.IO runs middleware inside its own async handling, where an
 * exception is an unhandled rejection (and used to end the process). Every path calls `next` once.
 */
export function createRealtime(options: {
  server?: HttpServer;
  redis?: Redis;
  sessions?: SessionOptions;
  signals?: SessionSignals;
  /**
   * REDIS_PREFIX: the adapter's pub/sub channels carry it. Channels are not keys (neither the key prefix
   * nor the database number separates them), so without it every deployment on one Redis server heard
   * the others' broadcasts.
   */
  prefix?: string;
  /** Live sockets one user may hold on this instance (socket-quota.server.ts; default 100). */
  maxSocketsPerUser?: number;
  /**
   * TRUST_PROXY (default false): the handshake's origin follows the same rule as the HTTP side's CSRF
   * check. It compared Origin with Host only, so behind a proxy that rewrites Host (and names the site
   * in X-Forwarded-Host) every socket was refused while forms worked.
   */
  trustProxy?: TrustProxy;
  log: Logger;
}): Realtime {
  const { server, redis, sessions, signals, prefix = '', trustProxy = false, log } = options;
  const handshakes = createHandshakeQuota(trustProxy);
  const io: RealtimeServer = server
    ? new Server(server, {
        path: '/socket.io',
        serveClient: false,
        // Our client speaks WebSocket only. Long-polling needs no cookie to open an Engine.IO session,
        // which the server keeps ~45 s (5.4 kB each: 10,000 from one client in 6 s held 54 MB); a browser
        // whose WebSocket is blocked still catches up through its GET /live/position checks.
        transports: ['websocket'],
        // A connection that never asks to join (Socket.IO's default waits 45 s) holds a file descriptor
        // without a session: anyone could pile them up. Our client asks at once.
        connectTimeout: 10_000,
        // Messages above what our client sends close their connection (MAX_SOCKET_MESSAGE_BYTES).
        maxHttpBufferSize: MAX_SOCKET_MESSAGE_BYTES,
        // …and one address may hold only so many of those at once (handshake-quota.server.ts).
        allowRequest: (request, callback) => handshakes.allowRequest(request, callback),
        // No binary packets: their attachments were held until complete (text-only-parser.server.ts).
        parser: textOnlyParser,
      })
    : new Server();
  // Our client speaks WebSocket only, so no request of ours carries an Engine.IO session id (`sid`): it
  // continues or upgrades a long-polling session. Engine.IO asks `allowRequest` only for new sessions, so
  // an upgrade naming an open connection's id was let in unchecked and held a second descriptor for
  // `upgradeTimeout`: the handshake quota's limit, doubled. Refused (400) before Engine.IO reads it.
  if (server) io.engine.use(refuseSessionIds);
  const quota = createSocketQuota(options.maxSocketsPerUser);
  const clients: Redis[] = [];
  if (redis) {
    // No command timeout here: the adapter's publish has no catch, so a timed-out publish during a Redis
    // outage was an unhandled rejection. Publishes wait through the outage instead (browsers resync anyway).
    const pub = redis.duplicate({ commandTimeout: undefined });
    const sub = redis.duplicate({ commandTimeout: undefined, enableReadyCheck: false });
    let down = false;
    for (const client of [pub, sub])
      client.on('error', (error: Error) => {
        if (!down)
          log.warn({ err: error }, 'realtime redis connection lost; broadcasts resume after it returns');
        down = true;
      });
    // Broadcasts published while the subscriber was away are gone: tell this instance's browsers to check
    // their position against the read model and refetch if they are behind.
    let readyBefore = false;
    sub.on('ready', () => {
      if (readyBefore) {
        log.info('realtime redis connection restored; asking browsers to resync');
        io.local.emit(RESYNC_EVENT);
      }
      readyBefore = true;
      down = false;
    });
    clients.push(pub, sub);
    io.adapter(guardedAdapter(createAdapter(pub, sub, { key: `${prefix}socket.io` }), sub, log));
  }
  let unbind = () => {};
  if (server && sessions) {
    const joins = createJoinOnce();
    io.use((socket, next) => {
      try {
        // A second join on a connection is no client of ours: refused unread, and the connection closed.
        if (!joins.first(socket.conn)) {
          socket.conn.close();
          return next(refusal('this connection has already asked to join'));
        }
        const { headers } = socket.request;
        // A cross-site page (or a sandboxed iframe: Origin `null`) must not open a socket with the
        // visitor's cookie.
        if (!fromOwnSite(headers, trustProxy)) return next(refusal('forbidden origin'));
        const token = readSessionToken(headers.cookie, sessions.cookies.session);
        if (!token) return next(refusal('sign in first'));
        const sessionId = sessionIdOf(sessions.secret, token);
        bindSocketToSession.handshake(sessions, sessionId).then(
          (live) => {
            if (!live) return next(refusal('sign in first'));
            // Gone while its session was read: it will never close again, so it must not be counted.
            if (socket.conn.readyState !== 'open') return next(refusal('the connection closed'));
            if (!quota.take(live.user.id, socket.conn))
              return next(refusal('too many live connections; close some tabs of Rivals'));
            socket.data.user = live.user;
            socket.data.sessionId = sessionId;
            handshakes.bound(socket.request);
            next();
          },
          (error: unknown) => {
            log.error({ err: error }, 'realtime handshake failed');
            next(refusal('the server could not check your session; try again'));
          },
        );
      } catch (error) {
        log.error({ err: error }, 'realtime handshake failed');
        next(refusal('the connection could not be accepted'));
      }
    });
    unbind = bindSocketToSession.start({
      io,
      sessions,
      signals,
      log,
      rooms: [
        { name: COMPETITORS_ROOM, action: 'competitors.view' },
        { name: AUDIT_ROOM, action: 'audit.view' },
      ],
    });
  } else {
    io.on('connection', (socket) => void socket.disconnect(true));
  }
  let closed = false;
  return {
    io,
    broadcast(room, event, payload) {
      if (!closed) io.to(room).emit(event, payload);
    },
    async close() {
      closed = true;
      unbind();
      // Without an HTTP server (a worker) there is no engine to close: io.close() would reject.
      if (server) await new Promise<void>((resolve) => void io.close(() => resolve()));
      await Promise.all(clients.map((client) => closeRedisClient(client)));
    },
  };
}

/** Engine.IO middleware: refuses any request that names an Engine.IO session (`?sid=`), see above. */
function refuseSessionIds(request: IncomingMessage, _response: unknown, next: (error?: Error) => void): void {
  const named = new URL(request.url ?? '/', 'http://rivals.invalid').searchParams.has('sid');
  next(named ? new Error('a WebSocket-only server continues no session') : undefined);
}
