import { z } from 'zod';
import { defineEvent } from '../registry.ts';

export const SegmentAdded = defineEvent({
  type: 'SegmentAdded',
  schemaVersion: 1,
  schema: z.object({
    segmentId: z.string().min(1),
    name: z.string().min(1),
    position: z.number().int().positive(),
  }),
});

export type SegmentEvent = { type: 'SegmentAdded'; data: z.infer<typeof SegmentAdded.schema> };

export const segmentEventDefinitions = [SegmentAdded];
