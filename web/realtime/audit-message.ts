/**
 * What a browser that may read the audit log hears after new lines are projected (shared by server and
 * client): only how far the log goes, never what it says, so the room's messages leak nothing the
 * socket's user could not read anyway.
 */
export interface AuditMessage {
  /** The newest line's position (an event's): clients keep the highest they have seen. */
  position: number;
}
