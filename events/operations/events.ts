import { z } from 'zod';
import { defineEvent } from '../registry.ts';

const projectionRebuiltV1 = z.object({
  projection: z.string(),
  events: z.number().int().nonnegative(),
  toPosition: z.number().int().nonnegative().nullable(),
  toTime: z.string().nullable(),
  dryRun: z.boolean(),
  differences: z.number().int().nonnegative(),
});

/**
 * Operator actions are part of the history too: a replay or rebuild leaves a trace in the audit log.
 * Version 2 adds the rows written, the time taken and whether an interrupted rebuild was resumed;
 * version 1 events (recorded before) read as "not known" for the first two and "not resumed".
 */
export const ProjectionRebuilt = defineEvent({
  type: 'ProjectionRebuilt',
  schemaVersion: 2,
  schema: projectionRebuiltV1.extend({
    rows: z.number().int().nonnegative().nullable(),
    seconds: z.number().nonnegative().nullable(),
    resumed: z.boolean(),
  }),
  upcasters: {
    1: (data) => ({ ...projectionRebuiltV1.parse(data), rows: null, seconds: null, resumed: false }),
  },
});

/** An operator retried or discarded a command that had gone to the dead letters. */
export const DeadLetterRetried = defineEvent({
  type: 'DeadLetterRetried',
  schemaVersion: 1,
  schema: z.object({
    deadLetterId: z.string(),
    commandId: z.string().nullable(),
    commandType: z.string().nullable(),
  }),
});

export const DeadLetterDiscarded = defineEvent({
  type: 'DeadLetterDiscarded',
  schemaVersion: 1,
  schema: z.object({
    deadLetterId: z.string(),
    commandId: z.string().nullable(),
    commandType: z.string().nullable(),
    error: z.string(),
  }),
});

export const DemoDataSeeded = defineEvent({
  type: 'DemoDataSeeded',
  schemaVersion: 1,
  schema: z.object({ competitors: z.number().int().nonnegative() }),
});

export const operationsEventDefinitions = [
  ProjectionRebuilt,
  DemoDataSeeded,
  DeadLetterRetried,
  DeadLetterDiscarded,
];
