import type { Socket, DefaultEventsMap } from 'socket.io';
import type { Logger } from '#infra/logger.ts';
import { can, type Action } from '#events/user/permissions.ts';
import type { SessionSignal, SessionSignals } from '../auth/session-signals.server.ts';
import { sessionById, type LiveSession, type SessionOptions } from '../auth/sessions.server.ts';
import type { RealtimeServer, SocketData } from './realtime.server.ts';

type LiveSocket = Socket<DefaultEventsMap, DefaultEventsMap, DefaultEventsMap, SocketData>;

/**
 * A socket lives exactly as long as its session. It is re-checked against the database
 * - when its session ends here or on another instance (sign-out: a `session-ended` signal),
 * - when its user changes (role change, disable, password set: a `user-changed` signal from the user-list
 *   reactor, and once more FOLLOW_UP_MS later) or signs in beyond the sessions cap (the sign-in sends
 *   `user-changed`: decision 0022),
 * - when the session would expire (a timer per socket, at the idle or absolute end), and
 * - at least every RECHECK_MS anyway, in case a signal was lost (Redis down).
 * A session that is gone closes the socket (after telling it `session-ended`); a changed role moves it
 * between rooms.
 */
const RECHECK_MS = 60_000;
/** Never re-check a socket more often than this (clock skew between Node and the database). */
const MIN_DELAY_MS = 200;
/**
 * A user's change is looked at again this long after its signal: the signal comes when the user list
 * shows the change, which can be before what ends the sessions is stored (a password's hash, stored after
 * its change is recorded, by an operator's command that has no way to signal the web instances).
 */
const FOLLOW_UP_MS = 2_000;

export const bindSocketToSession = {
  /** Not activity: a tab left open reconnects by itself, and must not keep its session from idling out. */
  handshake(sessions: SessionOptions, sessionId: string): Promise<LiveSession | undefined> {
    return sessionById(sessions, sessionId, false);
  },

  start(options: {
    io: RealtimeServer;
    sessions: SessionOptions;
    signals: SessionSignals | undefined;
    log: Logger;
    /** Each room and what a user must be allowed to join it. */
    rooms: readonly { name: string; action: Action }[];
  }): () => void {
    const { io, sessions, signals, log, rooms } = options;
    const timers = new Map<string, ReturnType<typeof setTimeout>>();
    /**
     * The newest re-check started per socket: reads can answer out of order (a pool of connections), and
     * an older read answering last put a demoted user's socket back in the rooms of their old role.
     */
    const latest = new Map<string, number>();

    const placeInRooms = (socket: LiveSocket) => {
      for (const room of rooms) {
        if (can(socket.data.user?.role, room.action)) void socket.join(room.name);
        else void socket.leave(room.name);
      }
    };

    const schedule = (socket: LiveSocket, endsAt: Date) => {
      clearTimeout(timers.get(socket.id));
      const delay = Math.max(MIN_DELAY_MS, Math.min(RECHECK_MS, endsAt.getTime() - Date.now() + 50));
      const timer = setTimeout(() => void recheck(socket), delay);
      timer.unref();
      timers.set(socket.id, timer);
    };

    const recheck = async (socket: LiveSocket): Promise<void> => {
      if (socket.disconnected || !socket.data.sessionId) return;
      const check = (latest.get(socket.id) ?? 0) + 1;
      latest.set(socket.id, check);
      let live: LiveSession | undefined;
      try {
        live = await sessionById(sessions, socket.data.sessionId, false);
      } catch (error) {
        // The database did not answer: keep the socket, look again soon (unless it left meanwhile: its
        // timer would outlive it, and its entry stay in `timers` for good).
        log.warn({ err: error }, 'realtime: could not re-check a session');
        if (socket.disconnected || latest.get(socket.id) !== check) return;
        schedule(socket, new Date(Date.now() + 5_000));
        return;
      }
      // A newer re-check started meanwhile: its read is the one to act on.
      if (socket.disconnected || latest.get(socket.id) !== check) return;
      if (!live) {
        socket.emit('session-ended');
        socket.disconnect(true);
        return;
      }
      socket.data.user = live.user;
      placeInRooms(socket);
      schedule(socket, live.endsAt);
    };

    const onSignal = (signal: SessionSignal) => {
      for (const socket of io.of('/').sockets.values()) {
        const hit =
          signal.kind === 'session-ended'
            ? socket.data.sessionId === signal.sessionId
            : socket.data.user?.id === signal.userId;
        if (!hit) continue;
        void recheck(socket);
        if (signal.kind === 'user-changed') setTimeout(() => void recheck(socket), FOLLOW_UP_MS).unref();
      }
    };
    const unsubscribe = signals?.subscribe(onSignal) ?? (() => {});

    io.on('connection', (socket) => {
      placeInRooms(socket);
      schedule(socket, new Date(Date.now() + RECHECK_MS));
      // The handshake read the session a moment ago; a sign-out in between must not be missed.
      void recheck(socket);
      socket.on('disconnect', () => {
        clearTimeout(timers.get(socket.id));
        timers.delete(socket.id);
        latest.delete(socket.id);
      });
    });

    return () => {
      unsubscribe();
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      latest.clear();
    };
  },
};
