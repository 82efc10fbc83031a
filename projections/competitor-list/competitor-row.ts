import type { CompetitorEvent } from '#events/competitor/events.ts';
import { pickCompetitorFields, type CompetitorFields, type NoteColumn } from '#events/competitor/fields.ts';
import type { Recorded } from '#events/envelope.ts';
import { assertNever } from '#infra/assert-never.ts';

export interface NoteMeta {
  version: number;
  byId: string;
  byName: string;
  at: string;
}

/** One row of the competitor list, as the projection computes it. */
export interface CompetitorRow extends CompetitorFields {
  id: string;
  segmentName: string;
  rank: number;
  notes: Record<NoteColumn, string>;
  noteMeta: Partial<Record<NoteColumn, NoteMeta>>;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * The events whose row needs nothing from the context (no segment name, no rank): a batch of only these
 * (note edits, deletions: the common case) skips reading the segments and the highest rank.
 */
export const eventsWithoutContext: ReadonlySet<string> = new Set([
  'CompetitorNoteUpdated',
  'CompetitorDeleted',
]);

export interface RowContext {
  segmentName(segmentId: string): string;
  /** The rank a new competitor gets: last place. */
  nextRank(): number;
}

/**
 * Pure: the row after one event. `undefined` in means the row does not exist yet; `null` out means
 * the competitor is gone from the list.
 */
export function evolveCompetitorRow(
  row: CompetitorRow | null | undefined,
  event: Recorded<CompetitorEvent>,
  context: RowContext,
): CompetitorRow | null | undefined {
  const at = event.metadata.at;
  switch (event.type) {
    case 'CompetitorAdded': {
      const fields = pickCompetitorFields(event.data);
      return {
        id: event.data.competitorId,
        ...fields,
        segmentName: context.segmentName(fields.segmentId),
        rank: context.nextRank(),
        notes: { strengths: '', weaknesses: '', pricing: '', general: '' },
        noteMeta: {},
        version: event.streamVersion,
        createdAt: at,
        updatedAt: at,
      };
    }
    case 'CompetitorUpdated': {
      if (!row) return row;
      // Only version 1 events carry a segment; since then a segment change is a board move.
      const fields = pickCompetitorFields({
        ...event.data,
        segmentId: event.data.segmentId ?? row.segmentId,
      });
      return {
        ...row,
        ...fields,
        segmentName: context.segmentName(fields.segmentId),
        version: event.streamVersion,
        updatedAt: at,
      };
    }
    case 'CompetitorNoteUpdated': {
      if (!row) return row;
      const { column, value, noteVersion } = event.data;
      const meta: NoteMeta = {
        version: noteVersion,
        byId: event.metadata.actor.id,
        byName: event.metadata.actor.name,
        at,
      };
      return {
        ...row,
        notes: { ...row.notes, [column]: value },
        noteMeta: { ...row.noteMeta, [column]: meta },
        version: event.streamVersion,
        updatedAt: at,
      };
    }
    case 'CompetitorDeleted':
      return null;
    default:
      return assertNever(event);
  }
}
