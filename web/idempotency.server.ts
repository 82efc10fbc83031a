import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import { z } from 'zod';
import { ValidationError } from '#infra/errors.ts';

/** The hidden form field and the XHR header that carry a request's idempotency key. */
export const IDEMPOTENCY_FIELD = '_idempotency_key';
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

const keySchema = z.uuid();

/**
 * The client's key for this state change, if it sent one: it becomes the command id, so a retry or a
 * double submit gets the first outcome and never makes a second event. Requests without one (scripts)
 * still work, without that protection; a malformed one, or one sent twice, is refused rather than
 * silently replaced or dropped.
 */
export function idempotencyKey(ctx: Context): string | undefined {
  const header = ctx.get(IDEMPOTENCY_HEADER);
  const body = ctx.request.body as Record<string, unknown> | undefined;
  const field = typeof body === 'object' && body !== null ? body[IDEMPOTENCY_FIELD] : undefined;
  // Sent twice (a list) or not as text, the key is neither of its values: read as none, the change
  // would lose its protection against being made twice.
  if (field !== undefined && typeof field !== 'string')
    throw new ValidationError(
      `The form's ${IDEMPOTENCY_FIELD} came more than once (or not as text), so nothing was done. ` +
        'Reload the page and make your change again.',
    );
  const raw = header || field || '';
  if (!raw) return undefined;
  const parsed = keySchema.safeParse(raw.toLowerCase());
  if (!parsed.success)
    throw new ValidationError(
      `The ${IDEMPOTENCY_HEADER} must be a UUID (the page sends one by itself; reload it and try again).`,
    );
  return parsed.data;
}

/**
 * Fields left out of a request's digest: the key and the form token differ between a request and its
 * retry without changing what it asks for, and a password must not be kept even as a (fast) hash.
 */
const notPartOfTheRequest = new Set([
  IDEMPOTENCY_FIELD,
  '_csrf',
  'password',
  'currentPassword',
  'newPassword',
  'repeatPassword',
]);

/** JSON with object keys in sorted order, so the same fields always give the same text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .filter((key) => !notPartOfTheRequest.has(key))
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * What this request asks for: its method, path and fields (not the key or the form token). A retry of
 * the same request has the same digest; the same key sent with a different request does not, and is
 * refused rather than answered with the first request's outcome (`keyOfADifferentRequest`). Taken from
 * the request rather than the command, because some commands are built from the state the request
 * finds (a move button swaps two neighbours of the current order), which a retry finds changed.
 */
export function requestDigest(ctx: Context): string {
  return createHash('sha256')
    .update(`${ctx.method} ${ctx.path}\n${canonicalJson(ctx.request.body ?? null)}`)
    .digest('base64url');
}
