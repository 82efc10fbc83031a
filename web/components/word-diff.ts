export type DiffPart = { kind: 'same' | 'added' | 'removed'; text: string };

/** Words and runs of white space, so joining the parts gives back the text exactly. */
const tokens = (text: string): string[] => text.match(/\S+|\s+/g) ?? [];

/** Past this many token pairs the table would be too big; the diff falls back to "all replaced". */
const MAX_CELLS = 4_000_000;
/**
 * The token pairs one page may compare in all (a few hundred ms): a history of many long, rewritten
 * versions would otherwise hold the server for seconds per view (each full table is ~0.1–0.3 s).
 */
export const PAGE_DIFF_CELLS = 12_000_000;

/**
 * Word diffs of many (before, after) pairs within one budget of compared token pairs: each pair is
 * diffed word by word while the budget lasts, and shown replaced whole once it is spent.
 */
export function wordDiffs(
  pairs: readonly (readonly [before: string, after: string])[],
  budget = PAGE_DIFF_CELLS,
): DiffPart[][] {
  let left = budget;
  return pairs.map(([before, after]) => {
    const { parts, cells } = diffWithin(before, after, Math.min(MAX_CELLS, left));
    left -= cells;
    return parts;
  });
}

/**
 * A word-level diff (longest common subsequence over word tokens). Pure; the parts concatenate to
 * `before` (same + removed) and to `after` (same + added).
 */
export function wordDiff(before: string, after: string): DiffPart[] {
  return diffWithin(before, after, MAX_CELLS).parts;
}

/** The diff and the token pairs it compared; replaced whole when more than `maxCells` would be needed. */
function diffWithin(before: string, after: string, maxCells: number): { parts: DiffPart[]; cells: number } {
  const all = { a: tokens(before), b: tokens(after) };
  // Only the changed middle needs the table: an edit of a long note leaves most of it alone.
  let head = 0;
  while (head < all.a.length && head < all.b.length && all.a[head] === all.b[head]) head++;
  let tail = 0;
  while (
    tail < all.a.length - head &&
    tail < all.b.length - head &&
    all.a[all.a.length - 1 - tail] === all.b[all.b.length - 1 - tail]
  )
    tail++;
  const a = all.a.slice(head, all.a.length - tail);
  const b = all.b.slice(head, all.b.length - tail);
  const cells = a.length * b.length;
  if (cells > maxCells) {
    return {
      cells: 0,
      parts: [
        ...(before ? [{ kind: 'removed' as const, text: before }] : []),
        ...(after ? [{ kind: 'added' as const, text: after }] : []),
      ],
    };
  }
  const parts: DiffPart[] = [];
  const push = (kind: DiffPart['kind'], text: string) => {
    const last = parts.at(-1);
    if (last?.kind === kind) last.text += text;
    else if (text) parts.push({ kind, text });
  };
  push('same', all.a.slice(0, head).join(''));
  for (const part of lcsDiff(a, b)) push(part.kind, part.text);
  push('same', all.a.slice(all.a.length - tail).join(''));
  return { parts, cells };
}

/** The longest-common-subsequence diff of two token lists. */
function lcsDiff(a: readonly string[], b: readonly string[]): DiffPart[] {
  // lcs[i][j] = LCS length of a[i..] and b[j..], in one flat array.
  const width = b.length + 1;
  const lcs = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * width + j] =
        a[i] === b[j]
          ? (lcs[(i + 1) * width + j + 1] ?? 0) + 1
          : Math.max(lcs[(i + 1) * width + j] ?? 0, lcs[i * width + j + 1] ?? 0);
    }
  }
  const parts: DiffPart[] = [];
  const push = (kind: DiffPart['kind'], text: string) => {
    const last = parts.at(-1);
    if (last?.kind === kind) last.text += text;
    else parts.push({ kind, text });
  };
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      push('same', a[i++] as string);
      j++;
    } else if ((lcs[(i + 1) * width + j] ?? 0) >= (lcs[i * width + j + 1] ?? 0))
      push('removed', a[i++] as string);
    else push('added', b[j++] as string);
  }
  while (i < a.length) push('removed', a[i++] as string);
  while (j < b.length) push('added', b[j++] as string);
  return parts;
}
