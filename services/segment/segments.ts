import type { AddSegmentCommand } from '#events/segment/commands.ts';
import type { SegmentEvent } from '#events/segment/events.ts';
import { accept, reject, type Decider } from '../decider.ts';

export interface SegmentsState {
  segments: Map<string, { name: string; position: number }>;
}

export const segmentsDecider: Decider<AddSegmentCommand, SegmentEvent, SegmentsState> = {
  initialState: () => ({ segments: new Map() }),

  evolve(state, event) {
    const segments = new Map(state.segments);
    segments.set(event.data.segmentId, { name: event.data.name, position: event.data.position });
    return { segments };
  },

  decide(command, state) {
    const { segmentId, name } = command.payload;
    const existing = state.segments.get(segmentId);
    if (existing?.name === name) return accept();
    if (existing) return reject('conflict', `A segment with id ${segmentId} already exists.`);
    const taken = [...state.segments.values()].some((s) => s.name.toLowerCase() === name.toLowerCase());
    if (taken)
      return reject('conflict', `A segment named “${name}” already exists.`, { fields: { name: 'Taken.' } });
    return accept({ type: 'SegmentAdded', data: { segmentId, name, position: state.segments.size + 1 } });
  },
};
