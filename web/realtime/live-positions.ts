/**
 * How far the pages' read models are: what a browser compares broadcasts and head checks with
 * (GET /live/position, and the page as rendered: `<meta name="live-position">`).
 */
export interface LivePositions {
  /** The competitor list's checkpoint (every competitor screen follows it). */
  position: number;
  /** The audit log's newest line, for those who may read it: user changes and operator actions reach no other. */
  audit?: number;
}
