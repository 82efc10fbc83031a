import { z } from 'zod';
import type { Recorded, RecordedEvent } from '../envelope.ts';
import { defineEvent } from '../registry.ts';
import { competitorFields, noteColumns } from './fields.ts';

const storedFields = competitorFields.extend({
  website: z.string().nullable(),
  headquarters: z.string().nullable(),
});

export const CompetitorAdded = defineEvent({
  type: 'CompetitorAdded',
  schemaVersion: 1,
  schema: storedFields.extend({ competitorId: z.uuid() }),
});

/**
 * Version 2: the segment is no longer an edited field. Since the board (the `ordering` stream) moves
 * competitors between segments, a segment change is a `CompetitorMovedToSegment` there, whoever makes
 * it; an edit that carried the segment its form showed could silently undo a board move (decision
 * 0013). Version 1 events carry `segmentId` and keep meaning "set the segment", so replays agree.
 */
export const CompetitorUpdated = defineEvent({
  type: 'CompetitorUpdated',
  schemaVersion: 2,
  schema: storedFields.extend({ competitorId: z.uuid(), segmentId: storedFields.shape.segmentId.optional() }),
  upcasters: { 1: (data) => data },
});

export const CompetitorNoteUpdated = defineEvent({
  type: 'CompetitorNoteUpdated',
  schemaVersion: 1,
  schema: z.object({
    competitorId: z.uuid(),
    column: z.enum(noteColumns),
    value: z.string(),
    /** The note's version after this change: 1 for the first text. */
    noteVersion: z.number().int().positive(),
  }),
});

export const CompetitorDeleted = defineEvent({
  type: 'CompetitorDeleted',
  schemaVersion: 1,
  schema: z.object({ competitorId: z.uuid(), name: z.string() }),
});

export const CompetitorNameClaimed = defineEvent({
  type: 'CompetitorNameClaimed',
  schemaVersion: 1,
  schema: z.object({ name: z.string(), competitorId: z.uuid() }),
});

export const CompetitorNameReleased = defineEvent({
  type: 'CompetitorNameReleased',
  schemaVersion: 1,
  schema: z.object({ name: z.string(), competitorId: z.uuid() }),
});

export type CompetitorAddedData = z.infer<typeof CompetitorAdded.schema>;
export type CompetitorUpdatedData = z.infer<typeof CompetitorUpdated.schema>;
export type CompetitorNoteUpdatedData = z.infer<typeof CompetitorNoteUpdated.schema>;
export type CompetitorDeletedData = z.infer<typeof CompetitorDeleted.schema>;

export type CompetitorEvent =
  | { type: 'CompetitorAdded'; data: CompetitorAddedData }
  | { type: 'CompetitorUpdated'; data: CompetitorUpdatedData }
  | { type: 'CompetitorNoteUpdated'; data: CompetitorNoteUpdatedData }
  | { type: 'CompetitorDeleted'; data: CompetitorDeletedData };

/** The competitor's own event types (not the name claims), listed once; a missing one is a type error. */
const competitorEventType: Record<CompetitorEvent['type'], true> = {
  CompetitorAdded: true,
  CompetitorUpdated: true,
  CompetitorNoteUpdated: true,
  CompetitorDeleted: true,
};
export const competitorEventTypes = Object.keys(competitorEventType) as CompetitorEvent['type'][];

export const isCompetitorEvent = (event: RecordedEvent): event is Recorded<CompetitorEvent> =>
  Object.hasOwn(competitorEventType, event.type);

export type CompetitorNameEvent =
  | { type: 'CompetitorNameClaimed'; data: z.infer<typeof CompetitorNameClaimed.schema> }
  | { type: 'CompetitorNameReleased'; data: z.infer<typeof CompetitorNameReleased.schema> };

export const competitorEventDefinitions = [
  CompetitorAdded,
  CompetitorUpdated,
  CompetitorNoteUpdated,
  CompetitorDeleted,
  CompetitorNameClaimed,
  CompetitorNameReleased,
];
