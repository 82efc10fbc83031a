import { z } from 'zod';
import type { OrderingState } from './ordering-state.ts';

/**
 * The ordering fold as saved in `fold_snapshots`. Bump `ORDERING_FOLD_VERSION` whenever
 * `foldOrdering` would fold the same events differently: snapshots made by older rules are then
 * ignored (and replaced by the next save), never mixed with new ones.
 */
export const ORDERING_FOLD_VERSION = 1;
export const ORDERING_SNAPSHOT = 'ordering';

const saved = z.object({
  version: z.number().int().nonnegative(),
  ranking: z.array(z.string()),
  competitors: z.array(z.tuple([z.string(), z.string(), z.string()])),
  segments: z.array(z.string()),
  segmentNames: z.array(z.tuple([z.string(), z.string()])),
  recent: z.array(z.object({ version: z.number(), actorName: z.string(), summary: z.string() })),
});
export type SavedOrdering = z.infer<typeof saved>;

export const toSnapshot = (state: OrderingState): SavedOrdering => ({
  version: state.version,
  ranking: state.ranking,
  competitors: [...state.competitors].map(([id, c]) => [id, c.name, c.segmentId]),
  segments: state.segments,
  segmentNames: [...state.segmentNames],
  recent: state.recent,
});

/** The state a snapshot holds, or undefined if it is not one this code wrote (then fold from the start). */
export function fromSnapshot(data: unknown): OrderingState | undefined {
  const parsed = saved.safeParse(data);
  if (!parsed.success) return undefined;
  const s = parsed.data;
  return {
    version: s.version,
    ranking: s.ranking,
    competitors: new Map(s.competitors.map(([id, name, segmentId]) => [id, { name, segmentId }])),
    segments: s.segments,
    segmentNames: new Map(s.segmentNames),
    recent: s.recent,
  };
}
