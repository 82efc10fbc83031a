/**
 * Where a read model stands, as a browser follows it: its checkpoint, written "<transaction>:<position>"
 * (shared by server and client). Not a position alone: the log is read in commit order (decision 0002),
 * by the writing transaction, then position, so a later batch can hold lower positions than an earlier
 * one (two appends at once). A tab that kept the highest position it had heard then took a later change
 * with a lower position for one it had seen, and its head checks agreed. Marks only move forward.
 */
export type LiveMark = string;

/** A checkpoint's parts, as the server has them (envelope.ts `Checkpoint`). */
export const markOf = (checkpoint: { transactionId: string; position: number }): LiveMark =>
  `${checkpoint.transactionId}:${checkpoint.position}`;

const shape = /^(\d{1,20}):(\d{1,20})$/;

export const isLiveMark = (value: unknown): value is LiveMark =>
  typeof value === 'string' && shape.test(value);

function partsOf(mark: LiveMark): [bigint, bigint] {
  const match = shape.exec(mark);
  return match ? [BigInt(match[1]!), BigInt(match[2]!)] : [0n, 0n];
}

/** Negative when `a` is before `b`, zero when they are the same, positive after. */
export function compareMarks(a: LiveMark, b: LiveMark): number {
  const [ta, pa] = partsOf(a);
  const [tb, pb] = partsOf(b);
  if (ta !== tb) return ta < tb ? -1 : 1;
  return pa === pb ? 0 : pa < pb ? -1 : 1;
}

/** A mark's position alone (for tabs loaded before marks: live-marks.ts `LivePositionAnswer`). */
export const positionOf = (mark: LiveMark): number => Number(partsOf(mark)[1]);

export const laterMark = (a: LiveMark, b: LiveMark): LiveMark => (compareMarks(a, b) >= 0 ? a : b);
export const earlierMark = (a: LiveMark, b: LiveMark): LiveMark => (compareMarks(a, b) <= 0 ? a : b);
