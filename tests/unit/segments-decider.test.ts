import { describe, expect, it } from 'vitest';
import type { AddSegmentCommand } from '#events/segment/commands.ts';
import type { SegmentEvent } from '#events/segment/events.ts';
import { segmentsDecider } from '#services/segment/segments.ts';
import { given, recorded } from '#tests/support/given-when-then.ts';

const added = (segmentId: string, name: string, position: number): SegmentEvent => ({
  type: 'SegmentAdded',
  data: { segmentId, name, position },
});
const addSegment = (segmentId: string, name: string): AddSegmentCommand => ({
  type: 'AddSegment',
  payload: { segmentId, name },
});

describe('segments decider', () => {
  it('given no segments, when one is added, then it takes position 1', () => {
    expect(given(segmentsDecider, []).when(addSegment('smb', 'SMB'))).toEqual({
      events: [added('smb', 'SMB', 1)],
    });
  });

  it('given two segments, when a third is added, then it goes last', () => {
    const history = [added('enterprise', 'Enterprise', 1), added('smb', 'SMB', 2)];
    expect(given(segmentsDecider, history).when(addSegment('emerging', 'Emerging'))).toEqual({
      events: [added('emerging', 'Emerging', 3)],
    });
  });

  it('given a segment, when the same id and name are added again, then nothing happens (idempotent)', () => {
    expect(given(segmentsDecider, [added('smb', 'SMB', 1)]).when(addSegment('smb', 'SMB'))).toEqual({
      events: [],
    });
  });

  it('given a segment, when its id is added with another name, then a conflict', () => {
    expect(given(segmentsDecider, [added('smb', 'SMB', 1)]).when(addSegment('smb', 'Small'))).toEqual({
      status: 'rejected',
      code: 'conflict',
      message: 'A segment with id smb already exists.',
    });
  });

  it('given a segment, when another id takes its name in any case, then a conflict on the name field', () => {
    expect(
      given(segmentsDecider, [added('smb', 'SMB', 1)]).when(addSegment('small-business', 'smb')),
    ).toEqual({
      status: 'rejected',
      code: 'conflict',
      message: 'A segment named “smb” already exists.',
      fields: { name: 'Taken.' },
    });
  });

  it('evolve keeps each segment’s name and position, and leaves the earlier state unchanged', () => {
    const { state } = given(segmentsDecider, [added('enterprise', 'Enterprise', 1)]);
    const [smb] = recorded([added('smb', 'SMB', 2)]);
    const next = segmentsDecider.evolve(state, smb!);
    expect([...next.segments]).toEqual([
      ['enterprise', { name: 'Enterprise', position: 1 }],
      ['smb', { name: 'SMB', position: 2 }],
    ]);
    expect([...state.segments.keys()]).toEqual(['enterprise']);
  });
});
