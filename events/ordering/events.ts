import { z } from 'zod';
import { defineEvent } from '../registry.ts';

/**
 * What a reorder changed, never a copy of the list. Moves apply one after another to the order as it
 * stands: take the item out, put it in at `to` (1-based, clamped to the list). `from` is where it was.
 */
export const CompetitorRankChanged = defineEvent({
  type: 'CompetitorRankChanged',
  schemaVersion: 1,
  schema: z.object({
    competitorId: z.uuid(),
    name: z.string(),
    from: z.number().int().positive(),
    to: z.number().int().positive(),
  }),
});

export const CompetitorMovedToSegment = defineEvent({
  type: 'CompetitorMovedToSegment',
  schemaVersion: 1,
  schema: z.object({
    competitorId: z.uuid(),
    name: z.string(),
    fromSegmentId: z.string().min(1),
    toSegmentId: z.string().min(1),
  }),
});

const segmentMove = z.object({
  segmentId: z.string().min(1),
  from: z.number().int().positive(),
  to: z.number().int().positive(),
});

export const SegmentsReordered = defineEvent({
  type: 'SegmentsReordered',
  schemaVersion: 1,
  schema: z.object({ moves: z.array(segmentMove).min(1) }),
});

export type CompetitorRankChangedData = z.infer<typeof CompetitorRankChanged.schema>;
export type CompetitorMovedToSegmentData = z.infer<typeof CompetitorMovedToSegment.schema>;
export type SegmentsReorderedData = z.infer<typeof SegmentsReordered.schema>;

export type OrderingEvent =
  | { type: 'CompetitorRankChanged'; data: CompetitorRankChangedData }
  | { type: 'CompetitorMovedToSegment'; data: CompetitorMovedToSegmentData }
  | { type: 'SegmentsReordered'; data: SegmentsReorderedData };

export const orderingEventTypes = [
  'CompetitorRankChanged',
  'CompetitorMovedToSegment',
  'SegmentsReordered',
] as const;

export const orderingEventDefinitions = [CompetitorRankChanged, CompetitorMovedToSegment, SegmentsReordered];
