import { z } from 'zod';
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

export const CompetitorUpdated = defineEvent({
  type: 'CompetitorUpdated',
  schemaVersion: 1,
  schema: storedFields.extend({ competitorId: z.uuid() }),
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
