import type { z } from 'zod';
import type { FieldErrors } from '#infra/errors.ts';

/** The first message per field, keyed by field name, for re-rendering a form. */
export function fieldErrors(error: z.ZodError): FieldErrors {
  const fields: FieldErrors = {};
  for (const issue of error.issues) {
    const key = String(issue.path[0] ?? '_form');
    fields[key] ??= issue.message;
  }
  return fields;
}

/** Form bodies arrive as strings (or arrays of them); anything else becomes an empty string. */
export function formValues<K extends string>(body: unknown, keys: readonly K[]): Record<K, string> {
  const source = (body ?? {}) as Record<string, unknown>;
  return Object.fromEntries(keys.map((k) => [k, typeof source[k] === 'string' ? source[k] : ''])) as Record<
    K,
    string
  >;
}

/**
 * The keys of `keys` that came, but not as one string: sent twice (a list) or, in JSON, as anything but
 * text. `formValues` reads such a field as empty, which an optional field then saves as cleared.
 */
export function fieldsNotText<K extends string>(body: unknown, keys: readonly K[]): K[] {
  const source = (body ?? {}) as Record<string, unknown>;
  return keys.filter(
    (k) => Object.hasOwn(source, k) && source[k] !== undefined && typeof source[k] !== 'string',
  );
}

/** A field's first value as typed, for showing a form again: the first string of a list. */
export function firstText(body: unknown, key: string): string {
  const value = ((body ?? {}) as Record<string, unknown>)[key];
  if (typeof value === 'string') return value;
  return Array.isArray(value) && typeof value[0] === 'string' ? value[0] : '';
}

/** Told on a field that came more than once or not as text; `outcome`: what the form did not do. */
export const notTextMessage = (outcome = 'nothing was saved') =>
  `This field came more than once (or not as text), so ${outcome}. Reload the page and make your change again.`;

/**
 * A field error for each field of `keys` that came, but not as one string (`fieldsNotText`): empty when
 * none did. `formValues` reads such a field as empty, which a form would answer as missing ("Enter your
 * current password.") or save as cleared; merged over the form's own errors, the answer says what happened.
 */
export function notTextErrors<K extends string>(
  body: unknown,
  keys: readonly K[],
  outcome?: string,
): Partial<Record<K, string>> {
  return Object.fromEntries(fieldsNotText(body, keys).map((k) => [k, notTextMessage(outcome)])) as Partial<
    Record<K, string>
  >;
}

export type ParsedForm<K extends string, T> =
  | { values: Record<K, string>; data: T; errors?: undefined }
  | { values: Record<K, string>; data?: undefined; errors: FieldErrors; notText: K[] };

/**
 * A form's fields read as text (`formValues`) and checked by `schema`, the one way the forms read a body.
 * A field that came more than once (a list) or, in JSON, not as text is refused by name (`notTextErrors`,
 * over the schema's message for that field), never read as empty; `values` keeps what was typed first,
 * to show again (a page never shows a password again). `outcome`: what the form did not do.
 */
export function parseForm<K extends string, T>(
  body: unknown,
  keys: readonly K[],
  schema: z.ZodType<T>,
  outcome?: string,
): ParsedForm<K, T> {
  const values = formValues(body, keys);
  const parsed = schema.safeParse(values);
  const notText = fieldsNotText(body, keys);
  if (parsed.success && notText.length === 0) return { values, data: parsed.data };
  for (const key of notText) values[key] = firstText(body, key);
  const errors: FieldErrors = {
    ...(parsed.success ? {} : fieldErrors(parsed.error)),
    ...notTextErrors(body, notText, outcome),
  };
  return { values, errors, notText };
}
