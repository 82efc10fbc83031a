/**
 * What a browser that may read the audit log hears after new lines are projected (shared by server and
 * client): only how far the log goes, never what it says, so the room's messages leak nothing the
 * socket's user could not read anyway.
 */
export interface AuditMessage {
  /**
   * The newest line's position in this batch (an event's): clients keep the highest they have seen, for
   * head checks. Not an order of announcements: a later batch can hold lower positions (Postgres).
   */
  position: number;
}
