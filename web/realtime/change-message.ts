import type { LiveMark } from './live-mark.ts';
import type { ListEffect } from '#projections/competitor-list/change-effects.ts';

/** What a browser hears after a change to the competitor list is projected (shared by server and client). */
export interface ChangeMessage {
  /** Where the list's checkpoint stands after this batch (live-mark.ts): clients keep the latest they have seen. */
  mark: LiveMark;
  /** The mark's position, for tabs loaded before marks (live-marks.ts `LivePositionAnswer`). */
  position: number;
  changes: {
    type: string;
    competitorId: string | null;
    competitorName: string | null;
    actorId: string;
    /** The command that made the change: a tab ignores the echo of its own commands. */
    commandId: string;
    actorName: string;
    summary: string;
  }[];
  /**
   * Every change of the batch (up to a cap), compactly: what it can do to a page of the list, so a page
   * it cannot alter is not refetched, and the command, so a tab knows its own.
   */
  touched: { competitorId: string | null; commandId: string; effect: ListEffect }[];
  /** Changes in the batch beyond those in `touched`: a page must assume any of them alters it. */
  more: number;
}
