import { afterEach, describe, expect, it } from 'vitest';
import type { Queryable } from '#infra/db/database.ts';
import type { SessionSignal, SessionSignals } from '#web/auth/session-signals.server.ts';
import type { SessionOptions } from '#web/auth/sessions.server.ts';
import type { RealtimeServer } from '#web/realtime/realtime.server.ts';
import { bindSocketToSession } from '#web/realtime/socket-session.server.ts';
import { silentLog } from '#tests/support/runtime-pieces.ts';

type Role = 'viewer' | 'editor' | 'admin';

/** A database whose session reads answer only when the test says, in the order it chooses. */
function heldDatabase() {
  const reads: ((role: Role) => void)[] = [];
  const db = {
    query: () =>
      new Promise((resolve) => {
        reads.push((role) => {
          const now = new Date();
          resolve({
            rows: [
              {
                ...{ id: 'u1', email: 'u1@example.com', name: 'U1', role, disabled: false },
                ...{ lastSeen: now, createdAt: now, expiresAt: new Date(now.getTime() + 3_600_000) },
                listPosition: 0,
              },
            ],
          });
        });
      }),
  } as unknown as Queryable;
  return { db, reads };
}

function fakeSocket(role: Role) {
  const rooms = new Set<string>();
  return {
    id: 's1',
    data: { user: { id: 'u1', email: 'u1@example.com', name: 'U1', role }, sessionId: 'session-1' },
    disconnected: false,
    rooms,
    join: (room: string) => void rooms.add(room),
    leave: (room: string) => void rooms.delete(room),
    emit: () => true,
    disconnect: () => undefined,
    on: () => undefined,
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('a live socket bound to its session', () => {
  let stop = () => {};
  afterEach(() => stop());

  it('takes the newest read of its user when two re-checks answer out of order (a demotion is not undone)', async () => {
    const { db, reads } = heldDatabase();
    const socket = fakeSocket('editor');
    let connect: (s: typeof socket) => void = () => {};
    const io = {
      on: (_event: string, listener: typeof connect) => void (connect = listener),
      of: () => ({ sockets: new Map([[socket.id, socket]]) }),
    } as unknown as RealtimeServer;
    let signal: (s: SessionSignal) => void = () => {};
    const signals = { subscribe: (listener: typeof signal) => ((signal = listener), () => {}) };
    stop = bindSocketToSession.start({
      io,
      sessions: { db } as SessionOptions,
      signals: signals as unknown as SessionSignals,
      log: silentLog,
      rooms: [{ name: 'audit', action: 'audit.view' }],
    });

    connect(socket);
    expect(socket.rooms.has('audit')).toBe(true);
    // The first re-check (at connection) reads the session; the user is demoted meanwhile, and the
    // signal's re-check reads again. The newer read answers first, the older one after it.
    signal({ kind: 'user-changed', userId: 'u1' });
    expect(reads).toHaveLength(2);
    reads[1]!('viewer');
    await settle();
    reads[0]!('editor');
    await settle();

    expect(socket.data.user.role).toBe('viewer');
    expect(socket.rooms.has('audit')).toBe(false);
  });
});
