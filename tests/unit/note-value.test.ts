import { describe, expect, it } from 'vitest';
import { NOTE_MAX_LENGTH as SERVER_MAX, noteValue } from '#events/competitor/fields.ts';
import { NOTE_MAX_LENGTH, validateNote } from '#web/client/note-value.ts';

const hangul = (n: number) => Array.from({ length: n }, (_, i) => String.fromCharCode(0xac00 + i)).join('');

/** The notes dialog refuses what the server would refuse for its length, and nothing it would take. */
describe('the note dialog’s length check', () => {
  it('has the server’s limit', () => {
    expect(NOTE_MAX_LENGTH).toBe(SERVER_MAX);
  });

  it.each([
    ['10,000 letters', 'a'.repeat(10_000)],
    ['10,001 letters', 'a'.repeat(10_001)],
    ['12,000 letters (a long paste)', 'x'.repeat(12_000)],
    ['6,000 emoji (12,000 UTF-16 units)', '😀'.repeat(6_000)],
    ['10,000 emoji', '😀'.repeat(10_000)],
    ['10,001 emoji', '😀'.repeat(10_001)],
    ['9,999 letters and an emoji', `${'a'.repeat(9_999)}😀`],
    // Composed by the server (NFC) before it counts: 29,642 code points pasted decomposed are 10,000.
    ['10,000 Hangul syllables pasted decomposed (NFD)', hangul(10_000).normalize('NFD')],
    ['10,001 Hangul syllables pasted decomposed (NFD)', hangul(10_001).normalize('NFD')],
    // And the other way: a character NFC decomposes (U+FB2C is three code points composed).
    ['4,000 Hebrew presentation forms (12,000 after NFC)', '\ufb2c'.repeat(4_000)],
  ])('%s: refused in the dialog exactly when the server refuses it', (_, value) => {
    const server = noteValue.safeParse(value).success;
    expect(validateNote(value) === null).toBe(server);
  });

  it('says how long the note is', () => {
    expect(validateNote('x'.repeat(12_000))).toBe(
      'A note can be at most 10,000 characters; this one has 12,000.',
    );
    expect(validateNote('  ')).toBe('Value is required!');
  });
});
