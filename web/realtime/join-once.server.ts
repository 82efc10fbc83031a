/**
 * A connection asks to join once. Socket.IO makes a socket for every join (a CONNECT packet) that comes
 * while an earlier one on the same connection is still being checked, and checks each: a signed-in user
 * held hundreds of sockets on one connection (the per-user limit counts connections), each hearing every
 * broadcast, and anyone, with any cookie, made the server read a session for every packet of a burst.
 * Our client never joins twice on one connection (after a refusal or a disconnect it opens a new one).
 */
export interface JoinOnce {
  /** True the first time `connection` asks to join; false ever after. */
  first(connection: object): boolean;
}

export function createJoinOnce(): JoinOnce {
  const asked = new WeakSet<object>();
  return {
    first(connection) {
      if (asked.has(connection)) return false;
      asked.add(connection);
      return true;
    },
  };
}
