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
 * still work, without that protection; a malformed one is refused rather than silently replaced.
 */
export function idempotencyKey(ctx: Context): string | undefined {
  const header = ctx.get(IDEMPOTENCY_HEADER);
  const body = ctx.request.body as Record<string, unknown> | undefined;
  const field = typeof body === 'object' && body !== null ? body[IDEMPOTENCY_FIELD] : undefined;
  const raw = header || (typeof field === 'string' ? field : '');
  if (!raw) return undefined;
  const parsed = keySchema.safeParse(raw.toLowerCase());
  if (!parsed.success)
    throw new ValidationError(
      `The ${IDEMPOTENCY_HEADER} must be a UUID (the page sends one by itself; reload it and try again).`,
    );
  return parsed.data;
}
