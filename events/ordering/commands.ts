import { z } from 'zod';
import { segmentIdPattern } from '../segment/segment-id.ts';

/**
 * Drag-sorting (seed §7.6): after a drop the page sends the whole ordered list. Flat (`/ranking`):
 * `[{order, value}]`, `value` a competitor id. Grouped (`/segments`): `[{order, value, items}]`, `value`
 * a segment id, `items` that segment's competitors. Shapes and sizes are checked here; whether the list
 * is complete and current is decided against the log (services/ordering).
 */

/** The most items a reorder may carry: a 10,000-competitor ranking fits with room to spare. */
export const MAX_ORDERED_ITEMS = 20_000;
export const MAX_SEGMENTS = 200;

const order = z
  .number({ error: 'Each order must be a whole number from 1.' })
  .int('Each order must be a whole number from 1.')
  .min(1, 'Each order must be a whole number from 1.');

// Lower case, as streams name it: an upper-case spelling of a competitor's id is that competitor.
const competitorValue = z.uuid({ error: 'Each value must be a competitor id.' }).toLowerCase();
const segmentValue = z
  .string({ error: 'Each group value must be a segment id.' })
  .regex(segmentIdPattern, 'Each group value must be a segment id.');

/** Said of an item (or a group) that is not an object, or has other fields, instead of zod's own words. */
const shapeError =
  (shape: string, fields: string) =>
  (issue: { code?: string; keys?: readonly string[] }): string | undefined =>
    issue.code === 'unrecognized_keys'
      ? `Each ${shape} has only ${fields}; ${(issue.keys ?? []).map((k) => JSON.stringify(k)).join(', ')} ${(issue.keys ?? []).length > 1 ? 'are' : 'is'} not one of them.`
      : issue.code === 'invalid_type'
        ? `Each ${shape} must be an object {${fields}}.`
        : undefined;

export const orderedItem = z
  .object({ order, value: competitorValue }, { error: shapeError('item', 'order, value') })
  .strict();
export const rankingList = z
  .array(orderedItem, { error: 'Send the ranking as a list of {order, value}.' })
  .max(MAX_ORDERED_ITEMS, `A ranking can hold at most ${MAX_ORDERED_ITEMS.toLocaleString('en-US')} items.`);

export const orderedGroup = z
  .object(
    {
      order,
      value: segmentValue,
      items: z
        .array(orderedItem, { error: 'Each group needs a list of items.' })
        .max(
          MAX_ORDERED_ITEMS,
          `A board can hold at most ${MAX_ORDERED_ITEMS.toLocaleString('en-US')} items.`,
        ),
    },
    { error: shapeError('group', 'order, value, items') },
  )
  .strict();
export const boardList = z
  .array(orderedGroup, { error: 'Send the board as a list of {order, value, items}.' })
  .max(MAX_SEGMENTS, `A board can hold at most ${MAX_SEGMENTS} segments.`)
  .refine(
    (groups) => groups.reduce((n, g) => n + g.items.length, 0) <= MAX_ORDERED_ITEMS,
    `A board can hold at most ${MAX_ORDERED_ITEMS.toLocaleString('en-US')} items.`,
  );

export type OrderedItem = z.infer<typeof orderedItem>;
export type OrderedGroup = z.infer<typeof orderedGroup>;

/** The order version the client's list was based on; a newer one means someone reordered meanwhile. */
const expectedVersion = z.number().int().nonnegative().optional();

export const ReorderRanking = z.object({
  type: z.literal('ReorderRanking'),
  payload: z.object({ items: rankingList, expectedVersion }),
});

export const ReorganizeSegments = z.object({
  type: z.literal('ReorganizeSegments'),
  payload: z.object({ groups: boardList, expectedVersion }),
});

export type ReorderRankingCommand = z.infer<typeof ReorderRanking>;
export type ReorganizeSegmentsCommand = z.infer<typeof ReorganizeSegments>;
export type OrderingCommand = ReorderRankingCommand | ReorganizeSegmentsCommand;
