import { z } from 'zod';
import { defineEvent } from '../registry.ts';

/** Operator actions are part of the history too: a replay or rebuild leaves a trace in the audit log. */
export const ProjectionRebuilt = defineEvent({
  type: 'ProjectionRebuilt',
  schemaVersion: 1,
  schema: z.object({
    projection: z.string(),
    events: z.number().int().nonnegative(),
    toPosition: z.number().int().nonnegative().nullable(),
    toTime: z.string().nullable(),
    dryRun: z.boolean(),
    differences: z.number().int().nonnegative(),
  }),
});

export const DemoDataSeeded = defineEvent({
  type: 'DemoDataSeeded',
  schemaVersion: 1,
  schema: z.object({ competitors: z.number().int().nonnegative() }),
});

export const operationsEventDefinitions = [ProjectionRebuilt, DemoDataSeeded];
