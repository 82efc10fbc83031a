import type { Middleware } from 'koa';
import { UnsupportedMediaTypeError } from '#infra/errors.ts';

/** What the body parser accepts: forms and JSON of 64 kB at most, flat query strings. */
export const bodyLimits = {
  multipart: false,
  urlencoded: true,
  json: true,
  text: false,
  formLimit: '64kb',
  jsonLimit: '64kb',
  jsonStrict: true,
  queryString: { depth: 1, parameterLimit: 50, arrayLimit: 20 },
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
