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
