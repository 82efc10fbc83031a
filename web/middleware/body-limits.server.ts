import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { Context, Middleware, Next } from 'koa';
import { ContentTooLargeError, UnsupportedMediaTypeError, ValidationError } from '#infra/errors.ts';

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
  formLimit: 64 * 1024,
  jsonLimit: 64 * 1024,
  jsonStrict: true,
  queryString: { depth: 1, parameterLimit: 50, arrayLimit: 20, decoder: decodeFormField },
};

/**
 * A request body the parser does not read (multipart, plain text, none named) is refused with a 415 that
 * says what to send, before anything else looks at it: read as nothing, it would be refused later for a
 * missing form token, with advice (reload the page) that cannot help.
 */
export const readableBodiesOnly: Middleware = (ctx, next) => {
  if (ctx.is() !== null && !ctx.is('json', 'urlencoded')) {
    closeAfterAnswer(ctx.req, ctx.res);
    throw new UnsupportedMediaTypeError(
      'Send forms as application/x-www-form-urlencoded and calls as application/json; other bodies (such as file uploads) are not accepted.',
    );
  }
  return next();
};

/** How long a refused body's connection stays half-closed after its answer, before it is closed. */
export const REFUSED_BODY_LINGER_MS = 2_000;

/**
 * After the answer to a body refused before it was read whole (too large, a type or coding not read):
 * the connection closes (`Connection: close`) and nothing more of the body is read. The rest was read
 * and dropped, so a client sending slowly held the connection until the request timeout (30 s), and a
 * large upload was taken in whole only to be refused. Once the answer is written the server ends its
 * side and stops reading; the socket is closed for good a little later, not at once: closed with the
 * client still sending, the reset can erase the answer before the client reads it (RFC 9112 §9.6).
 */
export function closeAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
  if (req.complete || res.headersSent) return;
  // Node writes `Connection: close` and, once the answer is written, calls the socket's destroySoon.
  res.shouldKeepAlive = false;
  const socket = req.socket as Socket & { destroySoon?: () => void };
  socket.destroySoon = () => {
    socket.pause();
    socket.end();
    setTimeout(() => socket.destroy(), REFUSED_BODY_LINGER_MS).unref();
  };
}

/** The methods whose body the parser reads (koa-body's default). */
const PARSED_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * Runs `parse` (koa-body) on the request's bytes only once they are known to be UTF-8. The parser decodes
 * with replacement: a body sent in Latin-1 (é as the byte 0xE9) was read as "�" and saved that way, the
 * text lost and the answer "saved". The bytes are read here (inflated, at most `limits` bytes), refused
 * with a 400 that says so unless they are UTF-8, then handed to `parse` as the request's body.
 */
export async function utf8Body(
  ctx: Context,
  next: Next,
  parse: Middleware,
  limits: { json: number; form: number },
): Promise<void> {
  const kind = PARSED_METHODS.has(ctx.method) ? ctx.is('json', 'urlencoded') : false;
  if (!kind) return parse(ctx, next) as Promise<void>;
  let bytes: Buffer;
  try {
    bytes = await readBytes(ctx.req, kind === 'json' ? limits.json : limits.form);
  } catch (error) {
    closeAfterAnswer(ctx.req, ctx.res);
    throw error;
  }
  if (!isUtf8(bytes)) throw new ValidationError(notUtf8Message(bytes));
  const original = ctx.req;
  const checked = Object.assign(Readable.from([bytes]), {
    headers: { ...original.headers, 'content-encoding': 'identity', 'content-length': String(bytes.length) },
  });
  ctx.req = checked as unknown as IncomingMessage;
  try {
    await parse(ctx, () => {
      ctx.req = original;
      return next();
    });
  } finally {
    ctx.req = original;
  }
}

/**
 * How many bytes a compressed body of at most `limit` inflated bytes may take on the wire: data that does
 * not compress is stored with a few bytes per block. More is never a body within the limit: empty gzip
 * members, or bytes after the end of the compressed data, which inflate to nothing and were read on and on.
 */
const sentLimit = (limit: number) => limit + Math.ceil(limit / 64) + 1024;

/** The body's bytes, inflated as its Content-Encoding says; refused past `limit` without reading on. */
function readBytes(req: IncomingMessage, limit: number): Promise<Buffer> {
  // An empty Content-Encoding names no coding (as co-body's reader took it).
  const coding = (req.headers['content-encoding'] || 'identity').toLowerCase();
  const declared = Number(req.headers['content-length']);
  if (declared > (coding === 'identity' ? limit : sentLimit(limit))) throw new ContentTooLargeError(limit);
  let inflater: zlib.Gunzip | zlib.BrotliDecompress | undefined;
  if (coding === 'gzip' || coding === 'deflate') inflater = zlib.createUnzip();
  else if (coding === 'br') inflater = zlib.createBrotliDecompress();
  else if (coding !== 'identity')
    throw new UnsupportedMediaTypeError(
      `A body sent as ${coding} is not read: send it uncompressed, or as gzip, deflate or br.`,
    );
  const source: Readable = inflater ? req.pipe(inflater) : req;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let sent = 0;
    let settled = false;
    // Stops reading: the rest is not read (the caller closes the connection after the answer,
    // closeAfterAnswer), nor inflated. The error listener stays: a decompressor's later error must not be
    // an unhandled one.
    const stop = (error: Error) => {
      if (settled) return;
      settled = true;
      source.removeListener('data', onData);
      req.removeListener('data', onSent);
      req.removeListener('close', onClose);
      if (inflater) {
        req.unpipe(inflater);
        inflater.destroy();
      }
      req.pause();
      reject(error);
    };
    const unreadable = () => stop(new ValidationError('The request body could not be read.'));
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) stop(new ContentTooLargeError(limit));
      else chunks.push(chunk);
    };
    const onSent = (chunk: Buffer) => {
      sent += chunk.length;
      if (sent > sentLimit(limit)) stop(new ContentTooLargeError(limit));
    };
    // Closed before the whole body came (a client gone halfway); once it came, an inflated body may
    // still be flushing its last bytes.
    const onClose = () => {
      if (!req.complete) unreadable();
    };
    source.on('data', onData);
    if (inflater) req.on('data', onSent);
    source.once('end', () => {
      if (settled) return;
      settled = true;
      req.removeListener('data', onSent);
      req.removeListener('close', onClose);
      resolve(Buffer.concat(chunks, size));
    });
    source.on('error', unreadable);
    req.once('close', onClose);
    // Gone before anything here listened (while a layer before this one waited): no end or close is
    // coming, and the request would wait for one forever, its context held for the process's life.
    if (req.destroyed && !req.readableEnded) unreadable();
  });
}

/**
 * Where the bytes stop being UTF-8, for the message: the offset and the bytes there (which an editor or
 * a hex dump can find). Only run on a body already refused.
 */
export function firstNotUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i] ?? 0;
    let count: number;
    let low = 0x80;
    let high = 0xbf;
    if (lead < 0x80) count = 0;
    else if (lead >= 0xc2 && lead <= 0xdf) count = 1;
    else if (lead >= 0xe0 && lead <= 0xef) {
      count = 2;
      if (lead === 0xe0) low = 0xa0;
      if (lead === 0xed) high = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      count = 3;
      if (lead === 0xf0) low = 0x90;
      if (lead === 0xf4) high = 0x8f;
    } else return i;
    for (let k = 1; k <= count; k++) {
      const next = bytes[i + k];
      if (next === undefined || next < (k === 1 ? low : 0x80) || next > (k === 1 ? high : 0xbf)) return i;
    }
    i += count + 1;
  }
  return -1;
}

function notUtf8Message(bytes: Uint8Array): string {
  const at = firstNotUtf8(bytes);
  const shown = Array.from(
    bytes.subarray(Math.max(at, 0), Math.max(at, 0) + 4),
    (b) => `0x${b.toString(16).toUpperCase().padStart(2, '0')}`,
  ).join(' ');
  return `The request body is not UTF-8 text (at byte ${at}: ${shown}), so nothing was saved. Send the text encoded as UTF-8: a Latin-1 é, for one, is the byte 0xE9, where UTF-8 has 0xC3 0xA9.`;
}
