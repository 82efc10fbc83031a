import type { LiveMark } from './live-mark.ts';

/**
 * What a browser that may read the audit log hears after new lines are projected (shared by server and
 * client): only how far the log goes, never what it says, so the room's messages leak nothing the
 * socket's user could not read anyway.
 */
export interface AuditMessage {
  /** Where the audit log's checkpoint stands after this batch (live-mark.ts): clients keep the latest for head checks. */
  mark: LiveMark;
  /** The mark's position, for tabs loaded before marks (live-marks.ts `LivePositionAnswer`). */
  position: number;
}
