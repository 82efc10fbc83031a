import { z } from 'zod';
import type { Command } from '#events/command.ts';
import { noteEditPayload } from '#events/competitor/commands.ts';
import type { ProjectionName } from '#projections/all-projections.ts';
import { boardList, rankingList } from '#events/ordering/commands.ts';
import type { Action } from '#events/user/permissions.ts';
import { viewPattern } from './render-view.server.ts';

/** What the client may send besides the payload: the version its view was based on. */
export interface CallContext {
  expect?: { version: number };
}

export interface ComponentCall<S extends z.ZodType = z.ZodType> {
  /** Who may call it (the permission table). */
  action: Action;
  /** The payload, exactly; unknown keys are rejected. */
  schema: S;
  /** The command the call becomes. */
  command(payload: z.infer<S>, context: CallContext): Command;
  /** Read models that must show the change before the call answers (read-your-writes). */
  projections: readonly ProjectionName[];
}

export interface ComponentDefinition {
  events: Record<string, ComponentCall>;
  methods: Record<string, ComponentCall>;
}

/** Types the payload of `command` from the schema, then stores the call under the common type. */
function call<S extends z.ZodType>(definition: ComponentCall<S>): ComponentCall {
  return definition;
}

/** The read models a note's save waits for: the table's cell and the history (the plain note form's too). */
export const noteReadModels = ['competitor-list', 'note-history'] as const;

/**
 * The server-driven components and everything they may send. Anything not listed here is rejected.
 * docs/behaviour.md §6: `update-note` carries exactly {competitorId, column, value}.
 */
export const componentRegistry: Record<string, ComponentDefinition> = {
  'competitor-notes': {
    events: {
      'update-note': call({
        action: 'notes.edit',
        // Exactly {competitorId, column, value} (docs/behaviour.md §6), as the command defines them.
        schema: noteEditPayload.strict(),
        command: (payload, context) => ({
          type: 'UpdateCompetitorNote',
          payload: { ...payload, expectedNoteVersion: context.expect?.version },
        }),
        projections: noteReadModels,
      }),
    },
    methods: {},
  },
  /** Seed §7.6, flat: `/ranking` calls `reorder` with [{order, value}] after a drop. */
  ranking: {
    events: {},
    methods: {
      reorder: call({
        action: 'ranking.reorder',
        schema: rankingList,
        command: (items, context) => ({
          type: 'ReorderRanking',
          payload: { items, expectedVersion: context.expect?.version },
        }),
        projections: ['competitor-list', 'segment-board'],
      }),
    },
  },
  /** Seed §7.6, grouped: `/segments` calls `reorganize` with [{order, value, items: [{order, value}]}]. */
  segments: {
    events: {},
    methods: {
      reorganize: call({
        action: 'segments.reorder',
        schema: boardList,
        command: (groups, context) => ({
          type: 'ReorganizeSegments',
          payload: { groups, expectedVersion: context.expect?.version },
        }),
        projections: ['competitor-list', 'segment-board'],
      }),
    },
  },
};

/**
 * Components whose calls carry a whole list (a 10,000-item ranking is about 560 kB of JSON): only
 * these get the larger body limit; their schemas cap the number of items.
 */
export const largeBodyComponents: ReadonlySet<string> = new Set([
  '/components/ranking',
  '/components/segments',
]);
export const LARGE_BODY_LIMIT = 1536 * 1024;

const callName = (field: 'event' | 'method') =>
  z.string({ error: `The ${field} must be a name (text).` }).max(64, `The ${field} name is too long.`);
const expectMessage = 'expect must be {"version": n}, n the whole number (from 0) your page was based on.';
const version = z.number({ error: expectMessage }).int(expectMessage).nonnegative(expectMessage);
const expectSchema = z.object({ version }, { error: expectMessage }).strict();
const viewMessage = 'The view must be a path on this site.';
const envelopeKeys = 'A component call has only these fields: event or method, payload, expect and view.';
const envelopeShape =
  'A component call is a JSON object: {"event" or "method", "payload", "expect", "view"}, not a list or a single value.';

/** The protocol envelope: an event or a method call, its payload, and what the client's view expected. */
export const componentRequestSchema = z
  .object(
    {
      event: callName('event').optional(),
      method: callName('method').optional(),
      payload: z.unknown(),
      expect: expectSchema.optional(),
      /** The address of the page the call came from: the answer carries that page's fresh regions. */
      view: z
        .string({ error: viewMessage })
        .max(2048, viewMessage)
        .regex(viewPattern, viewMessage)
        .optional(),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? envelopeKeys
          : issue.code === 'invalid_type'
            ? envelopeShape
            : undefined,
    },
  )
  .strict()
  .refine(
    (r) => (r.event === undefined) !== (r.method === undefined),
    'Send either an event or a method, not both.',
  );
