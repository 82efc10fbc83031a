/** One step of a reorder: take `id` out of the list and put it in at `to` (both 1-based). */
export interface Move {
  id: string;
  from: number;
  to: number;
}

/** Indexes (into `values`) of one longest strictly increasing subsequence: O(n log n). */
export function longestIncreasing(values: readonly number[]): Set<number> {
  const tails: number[] = [];
  const previous = new Array<number>(values.length).fill(-1);
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((values[tails[mid] as number] as number) < v) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) previous[i] = tails[lo - 1] as number;
    tails[lo] = i;
  }
  const keep = new Set<number>();
  for (let i = tails.at(-1) ?? -1; i >= 0; i = previous[i] as number) keep.add(i);
  return keep;
}

/**
 * The fewest moves that give each group, in `current`, the relative order it has in `groups` (for a
 * flat list: one group holding every item, so the result is exactly that list). Items already in order
 * (a longest increasing run of their current places) stay; each other item goes right after its
 * predecessor in the group, or right before the group's first staying item if it leads. A single drag
 * is therefore a single move. Every id of `groups` must be in `current`.
 */
export function planMoves(current: readonly string[], groups: readonly (readonly string[])[]): Move[] {
  const list = [...current];
  const place = new Map(current.map((id, i) => [id, i]));
  const moves: Move[] = [];
  for (const group of groups) {
    if (group.length === 0) continue;
    const keep = longestIncreasing(group.map((id) => place.get(id) ?? -1));
    const firstKept = group[Math.min(...keep)] as string;
    group.forEach((id, i) => {
      if (keep.has(i)) return;
      const from = list.indexOf(id);
      list.splice(from, 1);
      const at = i === 0 ? list.indexOf(firstKept) : list.indexOf(group[i - 1] as string) + 1;
      list.splice(at, 0, id);
      if (at !== from) moves.push({ id, from: from + 1, to: at + 1 });
    });
  }
  return moves;
}
