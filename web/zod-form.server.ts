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
