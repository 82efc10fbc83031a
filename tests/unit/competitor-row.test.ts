import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { competitorEventTypes, type CompetitorEvent } from '#events/competitor/events.ts';
import type { Recorded } from '#events/envelope.ts';
import {
  evolveCompetitorRow,
  eventsWithoutContext,
  type CompetitorRow,
  type RowContext,
} from '#projections/competitor-list/competitor-row.ts';
import { exampleCompetitorFields, recorded, testMetadata } from '#tests/support/given-when-then.ts';

const id = randomUUID();
const segments: Record<string, string> = { smb: 'SMB', enterprise: 'Enterprise' };
const context: RowContext = {
  segmentName: (segmentId) => segments[segmentId] ?? '?',
  nextRank: () => 7,
};
const fields = exampleCompetitorFields;
const at = (minute: number) => `2026-11-01T10:${String(minute).padStart(2, '0')}:00.000Z`;

/** One stored event: stream version `version`, written by `actor` at minute `minute`. */
function stored(
  event: CompetitorEvent,
  version: number,
  minute: number,
  actor = { id: 'user-1', name: 'Ada' },
): Recorded<CompetitorEvent> {
  const [one] = recorded([event], testMetadata({ actor, at: at(minute) }));
  return { ...one!, streamVersion: version };
}

/** given(events) folds them into a row; .when(event) is the row after one more. */
function given(history: Recorded<CompetitorEvent>[]) {
  const row = history.reduce<CompetitorRow | null | undefined>(
    (r, e) => evolveCompetitorRow(r, e, context),
    undefined,
  );
  return { row, when: (event: Recorded<CompetitorEvent>) => evolveCompetitorRow(row, event, context) };
}

const addedEvent = stored({ type: 'CompetitorAdded', data: { ...fields, competitorId: id } }, 1, 0);
const note = (column: 'pricing' | 'general', value: string, noteVersion: number): CompetitorEvent => ({
  type: 'CompetitorNoteUpdated',
  data: { competitorId: id, column, value, noteVersion },
});

describe('evolveCompetitorRow', () => {
  it('given nothing, when a competitor is added, then a row with empty notes, the segment name and last rank', () => {
    expect(given([]).when(addedEvent)).toEqual({
      id,
      ...fields,
      segmentName: 'SMB',
      rank: 7,
      notes: { strengths: '', weaknesses: '', pricing: '', general: '' },
      noteMeta: {},
      version: 1,
      createdAt: at(0),
      updatedAt: at(0),
    });
  });

  it('given a row, when it is updated, then the fields, segment name, version and updatedAt change, nothing else', () => {
    const { row, when } = given([addedEvent]);
    const updated = stored(
      {
        type: 'CompetitorUpdated',
        data: { ...fields, competitorId: id, name: 'Acme Corp', segmentId: 'enterprise', threat: 'high' },
      },
      2,
      5,
    );
    expect(when(updated)).toEqual({
      ...row,
      name: 'Acme Corp',
      segmentId: 'enterprise',
      segmentName: 'Enterprise',
      threat: 'high',
      version: 2,
      updatedAt: at(5),
    });
  });

  it('given a row, when a note is updated, then that note, its meta (version, who, when) and the row version change', () => {
    const { row, when } = given([addedEvent, stored(note('general', 'Old news', 1), 2, 1)]);
    const next = when(stored(note('pricing', 'Per seat', 1), 3, 9, { id: 'user-2', name: 'Grace' }));
    expect(next).toEqual({
      ...row,
      notes: { ...row!.notes, pricing: 'Per seat' },
      noteMeta: {
        general: { version: 1, byId: 'user-1', byName: 'Ada', at: at(1) },
        pricing: { version: 1, byId: 'user-2', byName: 'Grace', at: at(9) },
      },
      version: 3,
      updatedAt: at(9),
    });
    expect(next!.createdAt).toBe(at(0));
  });

  it('given a row, when it is deleted, then null (gone from the list)', () => {
    const deleted = stored({ type: 'CompetitorDeleted', data: { competitorId: id, name: 'Acme' } }, 2, 3);
    expect(given([addedEvent]).when(deleted)).toBeNull();
  });

  it('given no row, when an update or a note arrives, then still no row', () => {
    const updated = stored({ type: 'CompetitorUpdated', data: { ...fields, competitorId: id } }, 2, 1);
    expect(given([]).when(updated)).toBeUndefined();
    expect(given([]).when(stored(note('pricing', 'x', 1), 2, 1))).toBeUndefined();
  });

  it('does not change the row it was given', () => {
    const { row, when } = given([addedEvent]);
    const before = structuredClone(row);
    when(stored(note('pricing', 'Changed', 1), 2, 1));
    expect(row).toEqual(before);
  });
  it('the events said to need no context (a batch of them skips two reads) never use it; the others do', () => {
    const refusing: RowContext = {
      segmentName: () => {
        throw new Error('segment name asked');
      },
      nextRank: () => {
        throw new Error('rank asked');
      },
    };
    const row = given([addedEvent]).row;
    const examples: Recorded<CompetitorEvent>[] = [
      addedEvent,
      stored({ type: 'CompetitorUpdated', data: { ...fields, competitorId: id } }, 2, 1),
      stored(note('general', 'x', 1), 2, 1),
      stored({ type: 'CompetitorDeleted', data: { competitorId: id, name: 'Acme' } }, 2, 1),
    ];
    // Every competitor event has an example here, so a new one must be placed on one side or the other.
    expect(new Set(examples.map((e) => e.type))).toEqual(new Set(competitorEventTypes));
    for (const event of examples) {
      const evolve = () => evolveCompetitorRow(row, event, refusing);
      if (eventsWithoutContext.has(event.type)) expect(evolve, event.type).not.toThrow();
      else expect(evolve, event.type).toThrow();
    }
  });
});
