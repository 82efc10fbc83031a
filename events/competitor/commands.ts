import { z } from 'zod';
import { text } from '../text.ts';
import { noteColumns, noteValue, typedCompetitorFields } from './fields.ts';

export const AddCompetitor = z.object({
  type: z.literal('AddCompetitor'),
  payload: typedCompetitorFields.extend({ competitorId: z.uuid() }),
});

export const UpdateCompetitor = z.object({
  type: z.literal('UpdateCompetitor'),
  payload: typedCompetitorFields.extend({
    competitorId: z.uuid(),
    /** The version the user's form was opened with; a newer version means someone else saved meanwhile. */
    expectedVersion: z.number().int().nonnegative().optional(),
    /**
     * The segment the form showed. The segment changes (as a board move) only if `segmentId` differs
     * from it, so a form opened before someone moved the competitor on the board cannot move it back.
     */
    baseSegmentId: text('Segment').max(64).optional(),
  }),
});

/**
 * One note as the notes dialog sends it (docs/behaviour.md §6); the protocol takes it `.strict()`. Ids
 * are lower case in streams: an upper-case spelling of a competitor's id is that competitor.
 */
export const noteEditPayload = z.object({
  competitorId: z.uuid('Unknown competitor.').toLowerCase(),
  column: z.enum(noteColumns, { error: 'Column must be one of strengths, weaknesses, pricing, general.' }),
  value: noteValue,
});

export const UpdateCompetitorNote = z.object({
  type: z.literal('UpdateCompetitorNote'),
  payload: noteEditPayload.extend({
    /** The note version the dialog opened with; omitted or `overwrite` means last write wins. */
    expectedNoteVersion: z.number().int().nonnegative().optional(),
  }),
});

export const DeleteCompetitor = z.object({
  type: z.literal('DeleteCompetitor'),
  payload: z.object({ competitorId: z.uuid() }),
});

export const competitorCommandSchemas = [
  AddCompetitor,
  UpdateCompetitor,
  UpdateCompetitorNote,
  DeleteCompetitor,
];

export type AddCompetitorCommand = z.infer<typeof AddCompetitor>;
export type UpdateCompetitorCommand = z.infer<typeof UpdateCompetitor>;
export type UpdateCompetitorNoteCommand = z.infer<typeof UpdateCompetitorNote>;
export type DeleteCompetitorCommand = z.infer<typeof DeleteCompetitor>;
export type CompetitorCommand =
  AddCompetitorCommand | UpdateCompetitorCommand | UpdateCompetitorNoteCommand | DeleteCompetitorCommand;
