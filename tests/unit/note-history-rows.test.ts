import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CompetitorEvent } from '#events/competitor/events.ts';
import type { Recorded } from '#events/envelope.ts';
import { noteHistoryRows, type StoredHistory } from '#projections/note-history/note-history.projection.ts';
import { recorded, testMetadata } from '#tests/support/given-when-then.ts';

type NoteUpdated = Extract<Recorded<CompetitorEvent>, { type: 'CompetitorNoteUpdated' }>;

const acme = randomUUID();
const globex = randomUUID();
const at = '2026-11-01T10:00:00.000Z';

/** Note changes as stored, at positions 11, 12, … in this order. */
function notes(
  ...changes: [competitorId: string, column: 'pricing' | 'general', value: string, noteVersion: number][]
): NoteUpdated[] {
  return recorded(
    changes.map(([competitorId, column, value, noteVersion]) => ({
      type: 'CompetitorNoteUpdated' as const,
      data: { competitorId, column, value, noteVersion },
    })),
    testMetadata({ actor: { id: 'user-2', name: 'Grace' }, at }),
  ).map((e, i) => ({ ...e, position: 11 + i }));
}

const row = (
  competitorId: string,
  column: string,
  noteVersion: number,
  value: string,
  previousValue: string,
  position: number,
  seq: number,
) => ({
  competitorId,
  column,
  noteVersion,
  value,
  previousValue,
  actorId: 'user-2',
  actorName: 'Grace',
  changedAt: at,
  position,
  seq,
});

/** What the history holds: notes as `[competitorId, column, version, value]`, and last places. */
function stored(
  notes: [competitorId: string, column: string, version: number, value: string][] = [],
  seqs: [competitorId: string, seq: number][] = [],
): StoredHistory {
  return {
    notes: new Map(notes.map(([c, column, version, value]) => [`${c}:${column}`, { version, value }])),
    seqs: new Map(seqs),
  };
}

describe('note history rows', () => {
  it('given no earlier text, when a note is first written, then it replaced the empty text and is the first change', () => {
    expect(noteHistoryRows(notes([acme, 'pricing', 'Per seat', 1]), stored())).toEqual([
      row(acme, 'pricing', 1, 'Per seat', '', 11, 1),
    ]);
  });

  it('given the stored latest text, when the note changes, then the row carries that text as previous and comes after the stored ones', () => {
    const held = stored([[acme, 'pricing', 1, 'Per seat']], [[acme, 3]]);
    expect(noteHistoryRows(notes([acme, 'pricing', 'Per user', 2]), held)).toEqual([
      row(acme, 'pricing', 2, 'Per user', 'Per seat', 11, 4),
    ]);
  });

  it('when one batch changes a note twice, then the second row’s previous text is the first row’s value', () => {
    const held = stored([[acme, 'pricing', 1, 'v1']], [[acme, 1]]);
    expect(noteHistoryRows(notes([acme, 'pricing', 'v2', 2], [acme, 'pricing', 'v3', 3]), held)).toEqual([
      row(acme, 'pricing', 2, 'v2', 'v1', 11, 2),
      row(acme, 'pricing', 3, 'v3', 'v2', 12, 3),
    ]);
  });

  it('keeps notes apart by competitor and by column, and numbers each competitor’s changes on their own', () => {
    const held = stored(
      [
        [acme, 'pricing', 1, 'Acme pricing'],
        [globex, 'pricing', 1, 'Globex pricing'],
      ],
      [
        [acme, 1],
        [globex, 5],
      ],
    );
    expect(
      noteHistoryRows(
        notes(
          [acme, 'general', 'Acme general', 1],
          [globex, 'pricing', 'Globex new', 2],
          [acme, 'pricing', 'Acme new', 2],
        ),
        held,
      ),
    ).toEqual([
      row(acme, 'general', 1, 'Acme general', '', 11, 2),
      row(globex, 'pricing', 2, 'Globex new', 'Globex pricing', 12, 6),
      row(acme, 'pricing', 2, 'Acme new', 'Acme pricing', 13, 3),
    ]);
  });

  it('given a batch applied again, when part of it is stored already, then only the rest gets rows, numbered without a gap', () => {
    const held = stored([[acme, 'pricing', 2, 'v2']], [[acme, 2]]);
    expect(
      noteHistoryRows(
        notes([acme, 'pricing', 'v1', 1], [acme, 'pricing', 'v2', 2], [acme, 'pricing', 'v3', 3]),
        held,
      ),
    ).toEqual([row(acme, 'pricing', 3, 'v3', 'v2', 13, 3)]);
  });

  it('does not change what it was told is stored', () => {
    const held = stored([[acme, 'pricing', 1, 'v1']], [[acme, 1]]);
    noteHistoryRows(notes([acme, 'pricing', 'v2', 2]), held);
    expect(held).toEqual(stored([[acme, 'pricing', 1, 'v1']], [[acme, 1]]));
  });
});
