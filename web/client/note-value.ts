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
  const length = [...value].length;
  if (length > NOTE_MAX_LENGTH)
    return `A note can be at most ${NOTE_MAX_LENGTH.toLocaleString('en-US')} characters; this one has ${length.toLocaleString('en-US')}.`;
  return null;
}
