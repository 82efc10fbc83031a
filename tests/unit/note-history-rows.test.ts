import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CompetitorEvent } from '#events/competitor/events.ts';
import type { Recorded } from '#events/envelope.ts';
import { noteHistoryRows } from '#projections/note-history/note-history.projection.ts';
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
});

describe('note history rows', () => {
  it('given no earlier text, when a note is first written, then it replaced the empty text', () => {
    expect(noteHistoryRows(notes([acme, 'pricing', 'Per seat', 1]), new Map())).toEqual([
      row(acme, 'pricing', 1, 'Per seat', '', 11),
    ]);
  });

  it('given the stored latest text, when the note changes, then the row carries that text as previous', () => {
    const previous = new Map([[`${acme}:pricing`, 'Per seat']]);
    expect(noteHistoryRows(notes([acme, 'pricing', 'Per user', 2]), previous)).toEqual([
      row(acme, 'pricing', 2, 'Per user', 'Per seat', 11),
    ]);
  });

  it('when one batch changes a note twice, then the second row’s previous text is the first row’s value', () => {
    const previous = new Map([[`${acme}:pricing`, 'v1']]);
    expect(noteHistoryRows(notes([acme, 'pricing', 'v2', 2], [acme, 'pricing', 'v3', 3]), previous)).toEqual([
      row(acme, 'pricing', 2, 'v2', 'v1', 11),
      row(acme, 'pricing', 3, 'v3', 'v2', 12),
    ]);
  });

  it('keeps notes apart by competitor and by column', () => {
    const previous = new Map([
      [`${acme}:pricing`, 'Acme pricing'],
      [`${globex}:pricing`, 'Globex pricing'],
    ]);
    expect(
      noteHistoryRows(
        notes(
          [acme, 'general', 'Acme general', 1],
          [globex, 'pricing', 'Globex new', 2],
          [acme, 'pricing', 'Acme new', 2],
        ),
        previous,
      ),
    ).toEqual([
      row(acme, 'general', 1, 'Acme general', '', 11),
      row(globex, 'pricing', 2, 'Globex new', 'Globex pricing', 12),
      row(acme, 'pricing', 2, 'Acme new', 'Acme pricing', 13),
    ]);
  });

  it('does not change the map of earlier texts it was given', () => {
    const previous = new Map([[`${acme}:pricing`, 'v1']]);
    noteHistoryRows(notes([acme, 'pricing', 'v2', 2]), previous);
    expect([...previous]).toEqual([[`${acme}:pricing`, 'v1']]);
  });
});
