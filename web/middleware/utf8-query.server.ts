import { isUtf8 } from 'node:buffer';
import type { Middleware } from 'koa';
import { ValidationError } from '#infra/errors.ts';

/** Runs of percent-escapes: the bytes of a character are always written side by side. */
const ESCAPE_RUNS = /(?:%[0-9a-fA-F]{2})+/g;

/**
 * Whether every percent-escape in `text` spells UTF-8. Node refuses raw bytes past ASCII in the request
 * line, so only escapes can carry other bytes, and a character cannot span a literal: each run of escapes
 * is checked on its own. A lone `%` is left to the reader (Node's query parser keeps it as typed).
 */
export function escapesAreUtf8(text: string): boolean {
  if (!text.includes('%')) return true;
  for (const [run] of text.matchAll(ESCAPE_RUNS)) {
    if (!isUtf8(Buffer.from(run.replaceAll('%', ''), 'hex'))) return false;
  }
  return true;
}

/**
 * A query string whose escapes are not UTF-8 (`?search=%E9`, Latin-1 for é) is refused saying so: Node's
 * query parser reads such an escape as "�", so the page searched for, or went on with, text nobody typed.
 */
export const utf8QueryOnly: Middleware = (ctx, next) => {
  if (!escapesAreUtf8(ctx.querystring))
    throw new ValidationError(
      'The address is not UTF-8 text: its query (after the ?) has a percent-escape that is not UTF-8, such as %E9 (é in Latin-1). Write each character as its UTF-8 escapes (é is %C3%A9), as browsers do.',
    );
  return next();
};
