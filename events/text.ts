import { z } from 'zod';

/**
 * Text people type, as every edge accepts it: commands, forms, queries and login fields all build their
 * strings from here, so a control character is refused the same way everywhere — with a message that
 * names the field — instead of being accepted and then refused by Postgres (which cannot store NUL).
 *
 * Refused: C0 controls (U+0000–U+001F), DEL and C1 controls (U+007F–U+009F), and lone surrogates
 * (half of a character, which Postgres's jsonb refuses); multi-line text (notes) keeps line breaks and tabs.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const SINGLE_LINE_CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const MULTI_LINE_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

/** Half of a surrogate pair without its other half: not a character at all, and Postgres refuses it. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Below U+0300 every character is already composed (NFC): most text needs no work at all. */
const MAY_DECOMPOSE = /[\u0300-\uffff]/;

/**
 * Every string in `value` composed (NFC), as `text` composes what people type. Events recorded before
 * that keep the letters as they were typed; the event registry reads them through this, so a replay or a
 * projection rebuild stores them composed too. Returns `value` itself when nothing changes.
 */
export function composeStrings(value: unknown): unknown {
  if (typeof value === 'string') return MAY_DECOMPOSE.test(value) ? value.normalize('NFC') : value;
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const items: readonly unknown[] = value;
    let copy: unknown[] | undefined;
    items.forEach((item, i) => {
      const composed = composeStrings(item);
      if (composed !== item) (copy ??= [...items])[i] = composed;
    });
    return copy ?? value;
  }
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const composed = composeStrings(item);
    if (composed !== item) (copy ??= { ...value })[key] = composed;
  }
  return copy ?? value;
}

/**
 * Text that shows nothing: spaces and invisible characters only (zero-width spaces and joiners, soft
 * hyphens: what `competitorNameKey` leaves out; and the braille blank, U+2800). Such a name or note looks
 * empty, so it counts as empty.
 */
export const isBlank = (value: string): boolean =>
  value.replace(/[\p{Default_Ignorable_Code_Point}\u2800]/gu, '').trim() === '';

/**
 * The explicit text-direction controls: embeddings and overrides (U+202A–U+202E) and isolates
 * (U+2066–U+2069). Not needed to write right-to-left text (the letters carry their direction; the marks
 * U+200E/U+200F stay allowed), they reorder what follows them: in a name, headquarters or address shown
 * inside a sentence or a link ("Added Evil\u202eCorp (SMB, low threat)" in the audit log) they make the
 * rest read differently from what it is, so a one-line field a person types refuses them, and so does a
 * note (its cell, its history and a conflict's "their text" show it).
 */
const DIRECTION_CONTROL = /[\u202a-\u202e\u2066-\u2069]/;

export const hasDirectionControls = (value: string): boolean => DIRECTION_CONTROL.test(value);

export const directionControlMessage = (label: string): string =>
  `${label} cannot contain text-direction controls (such as U+202E, right-to-left override): they make the text around it read differently from what it is.`;

export const hasControlCharacters = (value: string, options: { multiline?: boolean } = {}): boolean =>
  (options.multiline ? MULTI_LINE_CONTROL : SINGLE_LINE_CONTROL).test(value) || LONE_SURROGATE.test(value);

export const controlCharacterMessage = (label: string, options: { multiline?: boolean } = {}): string =>
  options.multiline
    ? `${label} cannot contain control characters (such as NUL) or broken characters; line breaks and tabs are fine.`
    : `${label} cannot contain control characters (such as NUL, tabs or line breaks) or broken characters.`;

/**
 * A string field named `label`: refuses control characters first (its message wins), then the caller
 * chains trim/min/max as usual. `required` is the message for a missing value.
 *
 * The text is composed (Unicode NFC) first: "é" typed as one character or as "e" plus a combining
 * accent (macOS, some pastes) is one spelling, so it is stored, counted and searched as one
 * (docs/decisions/0024-text-is-nfc.md).
 */
export function text(label: string, options: { multiline?: boolean; required?: string } = {}) {
  return z
    .string({ error: options.required ?? `${label} must be text.` })
    .normalize('NFC')
    .refine((value) => !hasControlCharacters(value, options), {
      message: controlCharacterMessage(label, options),
      abort: true,
    });
}
