import type { Server as HttpServer } from 'node:http';
import { createAdapter } from '@socket.io/redis-adapter';
import { Server, type DefaultEventsMap } from 'socket.io';
import type { Logger } from '#infra/logger.ts';
import type { Redis } from '#infra/redis.ts';
import { can } from '../auth/permissions.ts';
import { userForToken, type SessionOptions } from '../auth/sessions.server.ts';
import type { SessionUser } from '../pages/page-context.ts';

/** Everyone who may see the competitor list hears about changes to it. */
export const COMPETITORS_ROOM = 'competitors';
/** Sent to browsers that may have missed broadcasts: they compare positions and refetch if behind. */
export const RESYNC_EVENT = 'resync';

interface SocketData {
  user?: SessionUser;
}

export interface Realtime {
  io: Server<DefaultEventsMap, DefaultEventsMap, DefaultEventsMap, SocketData>;
  close(): Promise<void>;
}

const cookieValue = (header: string | undefined, name: string): string | undefined => {
  for (const part of (header ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return decodeURIComponent(rest.join('='));
  }
  return undefined;
};

/**
 * Socket.IO for live updates. A connection must come from our own origin and carry a valid session;
 * it joins the rooms its role may read. With Redis, the adapter fans broadcasts out across instances,
 * so a worker process (no HTTP server) can broadcast too.
 */
export function createRealtime(options: {
  server?: HttpServer;
  redis?: Redis;
  sessions?: SessionOptions;
  log: Logger;
}): Realtime {
  const { server, redis, sessions, log } = options;
  const io: Server<DefaultEventsMap, DefaultEventsMap, DefaultEventsMap, SocketData> = server
    ? new Server(server, { path: '/socket.io', serveClient: false, transports: ['websocket', 'polling'] })
    : new Server();
  const clients: Redis[] = [];
  if (redis) {
    // No command timeout here: the adapter's publish has no catch, so a timed-out publish during a Redis
    // outage was an unhandled rejection. Publishes wait through the outage instead (browsers resync anyway).
    const pub = redis.duplicate({ commandTimeout: undefined });
    const sub = redis.duplicate({ commandTimeout: undefined });
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
    io.adapter(createAdapter(pub, sub));
  }
  if (server && sessions) {
    io.use((socket, next) => {
      const { headers } = socket.request;
      // A cross-site page must not open a socket with the visitor's cookie.
      const origin = headers.origin;
      if (origin && new URL(origin).host !== headers.host) return next(new Error('forbidden origin'));
      const token = cookieValue(headers.cookie, sessions.cookies.session);
      if (!token) return next(new Error('sign in first'));
      userForToken(sessions, token)
        .then((user) => {
          if (!user) return next(new Error('sign in first'));
          socket.data.user = user;
          next();
        })
        .catch((error: unknown) => next(error instanceof Error ? error : new Error(String(error))));
    });
  }
  io.on('connection', (socket) => {
    if (can(socket.data.user?.role, 'competitors.view')) void socket.join(COMPETITORS_ROOM);
  });
  return {
    io,
    async close() {
      await new Promise<void>((resolve) => {
        void io.close(() => resolve());
        if (!server) resolve();
      });
      for (const client of clients) client.disconnect();
    },
  };
}
