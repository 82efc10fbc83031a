/**
 * The server's limit on a note (`NOTE_MAX_LENGTH`, events/competitor/fields.ts), counted as the server
 * counts it: by character (code point), so an emoji is one, not two. tests/unit/note-value.test.ts holds
 * the two equal. The browser bundle does not import the server's schema (it would bring zod along).
 */
export const NOTE_MAX_LENGTH = 10_000;

/**
 * docs/behaviour.md §5: empty (or whitespace-only) is not a note; one over the limit is refused in the
 * dialog, with its text kept (a `maxlength` on the textarea would cut a paste short without a word).
 */
export function validateNote(value: string | undefined): string | null {
  if (!value || !value.trim()) return 'Value is required!';
  // Composed first, as the server reads it (and as the dialog sends it): a note pasted decomposed (NFD)
  // has up to three code points per letter and was refused here at 10,000 letters of Hangul.
  const length = [...value.normalize('NFC')].length;
  if (length > NOTE_MAX_LENGTH)
    return `A note can be at most ${NOTE_MAX_LENGTH.toLocaleString('en-US')} characters; this one has ${length.toLocaleString('en-US')}.`;
  return null;
}
