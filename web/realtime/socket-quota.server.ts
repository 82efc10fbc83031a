/**
 * How many live sockets one user may hold on this instance. A browser tab holds one; without a cap, one
 * signed-in user (any role) could open sockets until the process ran out of file descriptors (3,000
 * sockets from one session: 3,000 descriptors and ~33 MB of heap; the limit here is 20,000), after
 * which it could not accept a request nor open a database connection. The count goes down when the
 * connection closes, however it ends (even if it closes before Socket.IO finishes connecting it).
 */
export const MAX_SOCKETS_PER_USER = 100;

/** What the quota needs of a connection: to hear when it closes. */
export interface ClosingConnection {
  once(event: 'close', listener: () => void): unknown;
}

export interface SocketQuota {
  /** Counts `connection` (once) against `userId` until it closes; false (and nothing counted) when full. */
  take(userId: string, connection: ClosingConnection): boolean;
  /** Sockets counted for the user now. */
  held(userId: string): number;
}

export function createSocketQuota(maxPerUser = MAX_SOCKETS_PER_USER): SocketQuota {
  const counts = new Map<string, number>();
  /**
   * Connections already counted, and for whom. A client may connect, disconnect and connect again on one
   * connection (Socket.IO packets, no new file descriptor): each connect was counted until the connection
   * closed, so one connection could take all the places of its user, and their other tabs went without
   * live updates.
   */
  const counted = new WeakMap<ClosingConnection, string>();
  return {
    take(userId, connection) {
      if (counted.get(connection) === userId) return true;
      const now = counts.get(userId) ?? 0;
      if (now >= maxPerUser) return false;
      counts.set(userId, now + 1);
      counted.set(connection, userId);
      connection.once('close', () => {
        const left = (counts.get(userId) ?? 1) - 1;
        // No entry for a user without sockets: the map holds only users who are connected.
        if (left > 0) counts.set(userId, left);
        else counts.delete(userId);
      });
      return true;
    },
    held: (userId) => counts.get(userId) ?? 0,
  };
}
