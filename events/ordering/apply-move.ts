/**
 * What a move event means, for every reader of the log (the deciders' fold and the projections): the
 * item leaves its place and is inserted at `to` (1-based), clamped to the list. An id that is not in
 * the list (deleted meanwhile) is ignored. Mutates `list`.
 */
export function applyMove(list: string[], id: string, to: number): void {
  const from = list.indexOf(id);
  if (from < 0) return;
  list.splice(from, 1);
  const at = Math.min(Math.max(to - 1, 0), list.length);
  list.splice(at, 0, id);
}
