import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { wordDiff, wordDiffs } from '#web/components/word-diff.ts';

const join = (parts: ReturnType<typeof wordDiff>, kinds: string[]) =>
  parts
    .filter((p) => kinds.includes(p.kind))
    .map((p) => p.text)
    .join('');

describe('word diff', () => {
  it('marks changed words only', () => {
    expect(wordDiff('price is $40 per seat', 'price is $45 per seat')).toEqual([
      { kind: 'same', text: 'price is ' },
      { kind: 'removed', text: '$40' },
      { kind: 'added', text: '$45' },
      { kind: 'same', text: ' per seat' },
    ]);
  });

  it('adding a word at the end marks only that word, not the one before it', () => {
    expect(wordDiff('cheap plans', 'cheap plans today')).toEqual([
      { kind: 'same', text: 'cheap plans' },
      { kind: 'added', text: ' today' },
    ]);
  });

  it('many pairs share one budget: only the changed middle counts, and past the budget a pair is replaced whole', () => {
    // 'b' against 'x' is one token pair; the second pair needs four and finds the budget spent.
    expect(
      wordDiffs(
        [
          ['a b c', 'a x c'],
          ['p q', 'r s'],
        ],
        1,
      ),
    ).toEqual([
      [
        { kind: 'same', text: 'a ' },
        { kind: 'removed', text: 'b' },
        { kind: 'added', text: 'x' },
        { kind: 'same', text: ' c' },
      ],
      [
        { kind: 'removed', text: 'p q' },
        { kind: 'added', text: 'r s' },
      ],
    ]);
  });

  it('handles empty sides', () => {
    expect(wordDiff('', 'new text')).toEqual([{ kind: 'added', text: 'new text' }]);
    expect(wordDiff('old', '')).toEqual([{ kind: 'removed', text: 'old' }]);
    expect(wordDiff('', '')).toEqual([]);
  });

  it('always reconstructs both texts exactly (property)', () => {
    const text = fc
      .array(fc.constantFrom('a', 'b', 'c', ' ', '\n', 'price', '$1'), { maxLength: 40 })
      .map((w) => w.join(''));
    fc.assert(
      fc.property(text, text, (before, after) => {
        const parts = wordDiff(before, after);
        expect(join(parts, ['same', 'removed'])).toBe(before);
        expect(join(parts, ['same', 'added'])).toBe(after);
      }),
      { numRuns: 500 },
    );
  });
});
