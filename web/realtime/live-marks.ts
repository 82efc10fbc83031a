import type { LiveMark } from './live-mark.ts';

/**
 * How far the pages' read models are: what a browser compares broadcasts and head checks with
 * (GET /live/position, and the page as rendered: `<meta name="live-position">`).
 */
export interface LiveMarks {
  /** The competitor list's checkpoint (every competitor screen follows it). */
  list: LiveMark;
  /** The audit log's checkpoint, for those who may read it: user changes and operator actions reach no other. */
  audit?: LiveMark;
}

/** GET /live/position's answer: the marks, the user, and the positions of tabs loaded before marks. */
export interface LivePositionAnswer {
  list: LiveMark;
  auditMark?: LiveMark;
  userId: string;
  /**
   * `position` (the list's) and `audit` (the audit log's) are the numbers the script of a tab loaded
   * before marks compares: an open tab keeps its script across an upgrade until it is reloaded, and
   * given marks in their place it kept NaN, so its head checks never refreshed and an open audit log
   * never showed a new line again. The messages carry `position` for it too. They go once no such tab
   * can be open.
   */
  position: number;
  audit?: number;
}
