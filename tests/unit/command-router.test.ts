import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Command } from '#events/command.ts';
import { competitorStream, orderingStream, segmentsStream, usersStream } from '#events/streams.ts';
import { commandKey } from '#services/command-router.ts';
import { addCompetitorCommand, envelope } from '#tests/support/runtime-pieces.ts';

const competitorId = randomUUID();
const keyOf = (command: Command) => commandKey(envelope(command));

/** The worker's lanes come from the command table: one lane per stream a command is decided on. */
describe('command router lanes', () => {
  it('puts every command on one competitor in that competitor’s lane', () => {
    const lane = competitorStream(competitorId);
    expect(keyOf(addCompetitorCommand('Initech', { competitorId }))).toBe(lane);
    expect(keyOf({ type: 'DeleteCompetitor', payload: { competitorId } })).toBe(lane);
    expect(
      keyOf({ type: 'UpdateCompetitorNote', payload: { competitorId, column: 'pricing', value: 'x' } }),
    ).toBe(lane);
  });

  it('gives segments, users and the ordering one lane each', () => {
    expect(keyOf({ type: 'AddSegment', payload: { segmentId: 'smb', name: 'SMB' } })).toBe(segmentsStream());
    expect(keyOf({ type: 'DisableUser', payload: { userId: randomUUID() } })).toBe(usersStream());
    expect(keyOf({ type: 'ReorderRanking', payload: { items: [] } })).toBe(orderingStream());
  });
});
