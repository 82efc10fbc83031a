import { type z } from 'zod';
import { NotFoundError, ValidationError } from '#infra/errors.ts';
import { noteColumns } from '#events/competitor/fields.ts';
import { fieldErrors } from './zod-form.server.ts';

/**
 * Where outside input becomes a value. Forms, JSON and queries go through zod schemas built from
 * `#events/text.ts`; route parameters, cookies, headers and the socket handshake through the functions
 * below. Each either returns a validated value or throws a 4xx with a message a person can act on —
 * never a raw exception (URIError, TypeError, a database error) that would become a 500.
 */

/** Parses `value` with `schema`, or throws a 400 naming the first problem (and every field's). */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, what = 'The request'): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const fields = fieldErrors(parsed.error);
  throw new ValidationError(Object.values(fields)[0] ?? `${what} is not valid.`, fields);
}

/** decodeURIComponent that answers undefined for a malformed escape instead of throwing URIError. */
export function decodeComponent(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/** Any hex UUID (Postgres's `uuid` accepts every one of them, not only RFC variants). */
export const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Route parameters by name: every `:id` is a UUID, checked before any query runs (a wrong one is a
 * 404, the page simply does not exist); a parameter with another name must be listed here. `canonical`
 * is the spelling handlers get: Postgres finds `/competitors/ABC…` by its uuid, but streams and commands
 * name ids in lower case, so an upper-case id would be found and then be "deleted or never existed".
 */
const routeParameters: Record<
  string,
  { pattern: RegExp; notFound: string; canonical?(value: string): string }
> = {
  id: {
    pattern: uuidPattern,
    notFound: 'We could not find that page: the address has no valid id.',
    canonical: (value) => value.toLowerCase(),
  },
  component: { pattern: /^[a-z0-9-]{1,64}$/, notFound: 'There is no such component.' },
  // A competitor's note: one of its four note columns (the note form for browsers without JavaScript).
  column: {
    pattern: new RegExp(`^(${noteColumns.join('|')})$`),
    notFound: 'There is no such note: a competitor has strengths, weaknesses, pricing and general notes.',
  },
  // A dead letter's row id (a bigint: 18 digits always fit), without leading zeros.
  letterId: {
    pattern: /^\d{1,18}$/,
    notFound: 'There is no such dead letter.',
    canonical: (value) => BigInt(value).toString(),
  },
};

export function validateRouteParams(params: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(params)) {
    const rule = routeParameters[name];
    if (!rule) throw new Error(`route parameter :${name} has no validation rule in web/input.server.ts`);
    if (value === undefined || !rule.pattern.test(value)) throw new NotFoundError(rule.notFound);
    if (rule.canonical) params[name] = rule.canonical(value);
  }
}

/** Session tokens are 32 random bytes in base64url; anything else is not worth a database lookup. */
export const sessionTokenPattern = /^[\w-]{20,64}$/;

/** One cookie from a raw Cookie header (the socket handshake has no Koa to do it), or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const index = part.indexOf('=');
    if (index < 0 || part.slice(0, index).trim() !== name) continue;
    return decodeComponent(part.slice(index + 1).trim());
  }
  return undefined;
}

/** A session token from a Cookie header, only when it has the shape of one. */
export function readSessionToken(header: string | undefined, name: string): string | undefined {
  const token = readCookie(header, name);
  return token && sessionTokenPattern.test(token) ? token : undefined;
}
