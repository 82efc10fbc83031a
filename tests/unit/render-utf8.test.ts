import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { utf8 } from '#web/render.server.tsx';

describe('utf8 (page text to bytes)', () => {
  it('gives the bytes Buffer.from gives, for any text: two-byte, astral, lone surrogates', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 2_000 }),
        fc.string({ maxLength: 50 }),
        (text, tail) => {
          const page = `<p>${text}—${tail}</p>`;
          expect(utf8(page).equals(Buffer.from(page))).toBe(true);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('keeps each answer to itself when the next page is encoded, and handles pages past its buffer', () => {
    const first = utf8('first — page');
    const second = utf8('second ▲ page, longer than the first');
    expect(first.toString()).toBe('first — page');
    expect(second.toString()).toBe('second ▲ page, longer than the first');
    const large = `${'▲'.repeat(600_000)}…`;
    expect(utf8(large).equals(Buffer.from(large))).toBe(true);
    const huge = `${'—'.repeat(1_500_000)}`;
    expect(utf8(huge).equals(Buffer.from(huge))).toBe(true);
  });
});
