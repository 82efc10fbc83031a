import { z } from 'zod';
import { directionControlMessage, hasDirectionControls, isBlank, text } from '../text.ts';

export const threats = ['low', 'medium', 'high'] as const;
export type Threat = (typeof threats)[number];

export const noteColumns = ['strengths', 'weaknesses', 'pricing', 'general'] as const;
export type NoteColumn = (typeof noteColumns)[number];
export const isNoteColumn = (value: string): value is NoteColumn =>
  (noteColumns as readonly string[]).includes(value);

export const NOTE_MAX_LENGTH = 10_000;

const optionalText = (max: number, label: string) =>
  text(label)
    .trim()
    .max(max, `${label} must be at most ${max} characters.`)
    .transform((v) => (v === '' ? null : v))
    .nullable();

export const competitorName = text('Name', { required: 'Name is required.' })
  .trim()
  .min(1, 'Name is required.')
  .max(120, 'Name must be at most 120 characters.');

export const website = text('Website')
  .trim()
  .max(300, 'Website must be at most 300 characters.')
  .refine((value) => value === '' || isHttpUrl(value), 'Website must be an http:// or https:// address.')
  .transform((v) => (v === '' ? null : v))
  .nullable();

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
  } catch {
    return false;
  }
}

/** The editable fields of a competitor, as typed in the form and as carried by commands and events. */
export const competitorFields = z.object({
  name: competitorName,
  website,
  segmentId: text('Segment', { required: 'Choose a segment.' }).trim().min(1, 'Choose a segment.').max(64),
  threat: z.enum(threats, { error: 'Choose a threat level: low, medium or high.' }),
  headquarters: optionalText(120, 'Headquarters'),
});
export type CompetitorFields = z.infer<typeof competitorFields>;

/** A one-line field as people type it: no text-direction controls (events/text.ts). */
const noDirectionControls =
  (label: string) =>
  <T extends z.ZodType<string | null>>(schema: T) =>
    schema.refine((value) => value === null || !hasDirectionControls(value), directionControlMessage(label));

/**
 * The fields as people type them (forms, add and edit commands): a name must show something, and no
 * one-line field reorders the text it is shown in. Stored events keep `competitorFields`, so a name
 * accepted before these rules still replays.
 */
export const typedCompetitorFields = competitorFields.extend({
  name: noDirectionControls('Name')(competitorName.refine((name) => !isBlank(name), 'Name is required.')),
  website: noDirectionControls('Website')(website),
  headquarters: noDirectionControls('Headquarters')(optionalText(120, 'Headquarters')),
});

/** The field names, from the schema: the one list every layer copies, compares or labels fields by. */
export const competitorFieldNames = competitorFields.keyof().options;
export type CompetitorFieldName = (typeof competitorFieldNames)[number];

/** Just the competitor fields of a payload, event or row that carries more. */
export const pickCompetitorFields = (source: CompetitorFields): CompetitorFields =>
  Object.fromEntries(competitorFieldNames.map((name) => [name, source[name]])) as CompetitorFields;

export const sameCompetitorFields = (a: CompetitorFields, b: CompetitorFields): boolean =>
  competitorFieldNames.every((name) => a[name] === b[name]);

/**
 * A note as people type it (the notes dialog, `update-note`): like a competitor's or a user's name, it may
 * not carry text-direction controls (events/text.ts), which reorder the text around them wherever it is
 * shown (the table's cell, the note history, a conflict's "their text"). Only commands read it: stored
 * CompetitorNoteUpdated events keep any text, so a note saved before this rule still replays.
 */
export const noteValue = text('A note', { multiline: true })
  .max(NOTE_MAX_LENGTH, `A note can be at most ${NOTE_MAX_LENGTH.toLocaleString('en-US')} characters.`)
  .refine((v) => !isBlank(v), 'Value is required!')
  .refine((v) => !hasDirectionControls(v), `${directionControlMessage('A note')} Nothing was saved.`);
