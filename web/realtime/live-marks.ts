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
