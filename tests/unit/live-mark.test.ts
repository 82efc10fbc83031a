import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { exampleCompetitorFields, recorded } from '#tests/support/given-when-then.ts';
import { changeMessage } from '#web/realtime/change-feed.server.ts';
import {
  compareMarks,
  earlierMark,
  isLiveMark,
  laterMark,
  markOf,
  positionOf,
} from '#web/realtime/live-mark.ts';

describe('live marks (where a read model stands, as a browser follows it)', () => {
  it('orders by transaction first, then position: a later transaction at a lower position is later', () => {
    expect(compareMarks('11:99', '10:100')).toBeGreaterThan(0);
    expect(compareMarks('10:100', '11:99')).toBeLessThan(0);
    expect(compareMarks('10:99', '10:100')).toBeLessThan(0);
    expect(compareMarks('10:100', '10:100')).toBe(0);
    expect(laterMark('10:100', '11:99')).toBe('11:99');
    expect(earlierMark('10:100', '11:99')).toBe('10:100');
  });

  it('compares transaction ids beyond 2^53 exactly (xid8 carries an epoch)', () => {
    expect(compareMarks('9007199254740993:1', '9007199254740992:5')).toBeGreaterThan(0);
  });

  it('is written from a checkpoint and read back only in its own shape', () => {
    expect(markOf({ transactionId: '4711', position: 42 })).toBe('4711:42');
    expect(isLiveMark('4711:42')).toBe(true);
    for (const bad of ['42', '4711:', ':42', '-1:2', '1:2:3', '1e3:2', 42, null, undefined])
      expect(isLiveMark(bad), String(bad)).toBe(false);
  });

  // A tab loaded before marks compares the position alone (live-marks.ts LivePositionAnswer).
  it('gives a mark’s position alone, and a change message carries it beside the mark', () => {
    expect(positionOf('9007199254740993:42')).toBe(42);
    const [event] = recorded([
      { type: 'CompetitorAdded', data: { ...exampleCompetitorFields, competitorId: randomUUID() } },
    ]);
    const message = changeMessage([event!], { transactionId: '4711', position: 42 });
    expect(message).toMatchObject({ mark: '4711:42', position: 42 });
  });
});
