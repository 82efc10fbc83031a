import type { CompetitorEvent } from '#events/competitor/events.ts';
import type { Recorded } from '#events/envelope.ts';
import type { OrderingEvent } from '#events/ordering/events.ts';
import type { SegmentEvent } from '#events/segment/events.ts';
import { orderingStream } from '#events/streams.ts';
import { applyMove } from '#events/ordering/apply-move.ts';

/** The events the order is folded from: who is live (and where), and every reorder. */
export type OrderingSourceEvent = CompetitorEvent | SegmentEvent | OrderingEvent;

export const orderingSourceTypes = [
  'CompetitorAdded',
  'CompetitorUpdated',
  'CompetitorDeleted',
  'SegmentAdded',
  'CompetitorRankChanged',
  'CompetitorMovedToSegment',
  'SegmentsReordered',
] as const;

/** A reorder someone made, kept to tell a person whose drop was stale what happened meanwhile. */
export interface RecentChange {
  version: number;
  actorName: string;
  summary: string;
}

export interface OrderingState {
  /** The version of the ordering stream: what a drop must `expect`. */
  version: number;
  /** Live competitor ids in rank order (rank = index + 1). */
  ranking: string[];
  competitors: Map<string, { name: string; segmentId: string }>;
  /** Segment ids in board order. */
  segments: string[];
  segmentNames: Map<string, string>;
  recent: RecentChange[];
}

const RECENT_KEPT = 50;

export const initialOrderingState = (): OrderingState => ({
  version: 0,
  ranking: [],
  competitors: new Map(),
  segments: [],
  segmentNames: new Map(),
  recent: [],
});

/**
 * Folds one event into `state` in place (the loader folds thousands; copying each time would be
 * quadratic). The competitor list projection applies the same rules, in the same commit order, so the
 * ranks it shows are the ranks decided here: an added competitor goes last, a deleted one leaves its
 * place, a rank change moves one item.
 */
export function foldOrdering(state: OrderingState, event: Recorded<OrderingSourceEvent>): void {
  switch (event.type) {
    case 'CompetitorAdded':
      if (state.competitors.has(event.data.competitorId)) return;
      state.ranking.push(event.data.competitorId);
      state.competitors.set(event.data.competitorId, {
        name: event.data.name,
        segmentId: event.data.segmentId,
      });
      return;
    case 'CompetitorUpdated': {
      const competitor = state.competitors.get(event.data.competitorId);
      if (!competitor) return;
      competitor.name = event.data.name;
      // Only version 1 events carry a segment; since then a segment change is a CompetitorMovedToSegment.
      if (event.data.segmentId !== undefined) competitor.segmentId = event.data.segmentId;
      return;
    }
    case 'CompetitorDeleted': {
      if (!state.competitors.delete(event.data.competitorId)) return;
      const at = state.ranking.indexOf(event.data.competitorId);
      if (at >= 0) state.ranking.splice(at, 1);
      return;
    }
    case 'CompetitorNoteUpdated':
      return;
    case 'SegmentAdded':
      if (!state.segmentNames.has(event.data.segmentId)) state.segments.push(event.data.segmentId);
      state.segmentNames.set(event.data.segmentId, event.data.name);
      return;
    case 'CompetitorRankChanged':
      applyMove(state.ranking, event.data.competitorId, event.data.to);
      return remember(state, event, `moved ${event.data.name} from #${event.data.from} to #${event.data.to}`);
    case 'CompetitorMovedToSegment': {
      const competitor = state.competitors.get(event.data.competitorId);
      if (competitor) competitor.segmentId = event.data.toSegmentId;
      const name = (id: string) => state.segmentNames.get(id) ?? id;
      return remember(
        state,
        event,
        `moved ${event.data.name} from ${name(event.data.fromSegmentId)} to ${name(event.data.toSegmentId)}`,
      );
    }
    case 'SegmentsReordered': {
      for (const move of event.data.moves) applyMove(state.segments, move.segmentId, move.to);
      const moved = event.data.moves.map(
        (m) => `the segment ${state.segmentNames.get(m.segmentId) ?? m.segmentId} from ${m.from} to ${m.to}`,
      );
      return remember(state, event, `moved ${moved.join(', ')}`);
    }
  }
}

function remember(state: OrderingState, event: Recorded<OrderingSourceEvent>, summary: string): void {
  if (event.stream !== orderingStream()) return;
  state.version = Math.max(state.version, event.streamVersion);
  state.recent.push({ version: event.streamVersion, actorName: event.metadata.actor.name, summary });
  if (state.recent.length > RECENT_KEPT) state.recent.splice(0, state.recent.length - RECENT_KEPT);
}

export const cloneOrderingState = (state: OrderingState): OrderingState => ({
  version: state.version,
  ranking: [...state.ranking],
  competitors: new Map([...state.competitors].map(([id, c]) => [id, { ...c }])),
  segments: [...state.segments],
  segmentNames: new Map(state.segmentNames),
  recent: [...state.recent],
});

/** Pure: the state after one event (for tests and single steps; the loader folds in place). */
export function evolveOrdering(state: OrderingState, event: Recorded<OrderingSourceEvent>): OrderingState {
  const next = cloneOrderingState(state);
  foldOrdering(next, event);
  return next;
}
