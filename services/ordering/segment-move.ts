import type { OrderingEvent } from '#events/ordering/events.ts';
import { accept, reject, type Decision } from '../decider.ts';
import type { OrderingState } from './ordering-state.ts';

/** An edit form's segment field, as a move on the board. */
export interface SegmentMove {
  competitorId: string;
  /** The segment the user chose. */
  toSegmentId: string;
}

/**
 * Pure: a competitor moved to another segment by its edit form. The caller sends this only when the
 * user changed the field from what the form showed (decision 0013), so this is an explicit choice and
 * wins over a board move made meanwhile, like any later drop would. Moving it where it already is
 * records nothing. Appended to the ordering stream, it refuses board drops based on the older board.
 */
export function decideSegmentMove(move: SegmentMove, state: OrderingState): Decision<OrderingEvent> {
  const competitor = state.competitors.get(move.competitorId);
  if (!competitor) return reject('not_found', 'This competitor was deleted.');
  if (!state.segmentNames.has(move.toSegmentId)) {
    const message = 'Choose one of the segments on the board.';
    return reject('validation', message, { fields: { segmentId: message } });
  }
  if (competitor.segmentId === move.toSegmentId) return accept();
  return accept({
    type: 'CompetitorMovedToSegment',
    data: {
      competitorId: move.competitorId,
      name: competitor.name,
      fromSegmentId: competitor.segmentId,
      toSegmentId: move.toSegmentId,
    },
  });
}
