import type { Middleware } from 'koa';
import { UnsupportedMediaTypeError } from '#infra/errors.ts';

/** A form field whose percent-escapes are not UTF-8 text (`%ED%A0%80`, `%FF`, a lone `%`). */
export class FormNotUtf8Error extends Error {
  constructor() {
    super(
      'The form is not UTF-8 text: a field has a percent-escape that is not UTF-8 (such as %FF or a lone %). Send every field percent-encoded as UTF-8, as browsers do.',
    );
  }
}

/**
 * Reads a form field as qs does, except that a malformed escape is refused instead of being kept as it
 * was sent: qs's own decoder answers `%ED%A0%80` or `Acme%FF` as that text, so a script's broken name
 * was stored as the escape itself, and answered as saved.
 */
export function decodeFormField(text: string): string {
  const spaced = text.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    throw new FormNotUtf8Error();
  }
}

/** What the body parser accepts: forms and JSON of 64 kB at most, flat query strings. */
export const bodyLimits = {
  multipart: false,
  urlencoded: true,
  json: true,
  text: false,
  formLimit: '64kb',
  jsonLimit: '64kb',
  jsonStrict: true,
  queryString: { depth: 1, parameterLimit: 50, arrayLimit: 20, decoder: decodeFormField },
};

/**
 * A request body the parser does not read (multipart, plain text, none named) is refused with a 415 that
 * says what to send, before anything else looks at it: read as nothing, it would be refused later for a
 * missing form token, with advice (reload the page) that cannot help.
 */
export const readableBodiesOnly: Middleware = (ctx, next) => {
  if (ctx.is() !== null && !ctx.is('json', 'urlencoded'))
    throw new UnsupportedMediaTypeError(
      'Send forms as application/x-www-form-urlencoded and calls as application/json; other bodies (such as file uploads) are not accepted.',
    );
  return next();
};
