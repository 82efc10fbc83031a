import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Command } from '#events/command.ts';
import { commandKey } from '#services/command-router.ts';
import { addCompetitorCommand, envelope } from '#tests/support/runtime-pieces.ts';

const competitorId = randomUUID();
const keyOf = (command: Command) => commandKey(envelope(command));

/**
 * The worker's lanes come from the command table: commands on one stream share a lane (so they run in
 * order); the streams of different aggregates get lanes of their own (so they run side by side).
 */
describe('command router lanes', () => {
  it('puts every command on one competitor in one lane, and other competitors in others', () => {
    const lane = keyOf({ type: 'DeleteCompetitor', payload: { competitorId } });
    expect(keyOf(addCompetitorCommand('Initech', { competitorId }))).toBe(lane);
    expect(keyOf({ type: 'UpdateCompetitor', payload: { competitorId, name: 'Initech' } } as Command)).toBe(
      lane,
    );
    expect(
      keyOf({ type: 'UpdateCompetitorNote', payload: { competitorId, column: 'pricing', value: 'x' } }),
    ).toBe(lane);
    expect(keyOf({ type: 'DeleteCompetitor', payload: { competitorId: randomUUID() } })).not.toBe(lane);
  });

  it('gives segments, users and the ordering one lane each, apart from the competitors', () => {
    const lanes = [
      keyOf({ type: 'AddSegment', payload: { segmentId: 'smb', name: 'SMB' } }),
      keyOf({ type: 'DisableUser', payload: { userId: randomUUID() } }),
      keyOf({ type: 'ReorderRanking', payload: { items: [] } }),
      keyOf({ type: 'DeleteCompetitor', payload: { competitorId } }),
    ];
    expect(new Set(lanes).size).toBe(lanes.length);
    expect(keyOf({ type: 'AddSegment', payload: { segmentId: 'ent', name: 'Enterprise' } })).toBe(lanes[0]);
    expect(keyOf({ type: 'EnableUser', payload: { userId: randomUUID() } })).toBe(lanes[1]);
    expect(keyOf({ type: 'ReorganizeSegments', payload: { segments: [] } } as unknown as Command)).toBe(
      lanes[2],
    );
  });
});
