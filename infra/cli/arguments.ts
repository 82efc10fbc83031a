import { InvalidArgumentError } from 'commander';
import { z } from 'zod';

/** Commander argument parsers that say what is expected; the error names the flag. */
export const wholeNumber =
  (min: number, max: number) =>
  (value: string): number => {
    // Digits only (no minimum is below 0): `Number` alone reads '' and ' ' as 0 (an unset
    // `--to-position "$N"` rebuilt every projection from nothing) and takes 0x10 or 1e3.
    const parsed = z
      .string()
      .trim()
      .regex(/^\d+$/)
      .transform(Number)
      .pipe(z.number().int().min(min).max(max))
      .safeParse(value);
    if (!parsed.success) {
      throw new InvalidArgumentError(
        `Expected a whole number from ${min.toLocaleString('en-US')} to ${max.toLocaleString('en-US')}.`,
      );
    }
    return parsed.data;
  };

const TIME_EXAMPLE = 'a date-time such as 2026-11-21T10:00:00Z';

/** A time of day with no zone after it: `new Date` reads it in this machine's zone, a bare date in UTC. */
const ZONELESS = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}([.,]\d+)?)?$/i;
/**
 * What is accepted: a date, or a date and a time of day with its zone (Z or an offset). A fraction of a
 * second may follow a full stop or a comma, as ISO 8601 allows both (`10:00:00,5Z`): the comma was read
 * as a time with no zone, and the message asked for the Z that was there.
 */
const ZONED = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}([.,]\d+)?)?(Z|[+-]\d{2}(:?\d{2})?))?$/i;
/** An offset of whole hours (ISO 8601's "+01"), which `new Date` does not read: written out as "+01:00". */
const HOURS_ONLY_OFFSET = /([T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?[+-]\d{2})$/i;
/** Ends in a zone, Z or an offset. */
const WITH_ZONE = /\d(Z|[+-]\d{2}(:?\d{2})?)$/i;
/** The comma before a fraction of a second (only one can be there once ZONED has matched). */
const FRACTION_COMMA = /(?<=:\d{2}),(?=\d)/;

/**
 * A date-time written out (a date at least): `new Date` alone would take "5" as the year 2001, and rolls
 * a day the month does not have over into the next ("2026-02-30" was 2 March). A time of day needs its
 * zone: "2026-11-21T10:00" meant one instant on an operator's laptop and another on the server. Years
 * are 1 to 9999, as the database reads them ("0000-01-01" failed deep inside the command).
 */
function dateTime(value: string, expected: string): Date {
  const text = value.trim();
  const [, year, month, day] = /^(\d{4})-(\d{2})-(\d{2})/.exec(text)?.map(Number) ?? [];
  if (year === undefined || month === undefined || day === undefined)
    throw new InvalidArgumentError(expected);
  // Day 0 of the next month is this month's last day (setUTCFullYear: Date.UTC reads year 99 as 1999).
  const daysInMonth = new Date(new Date(0).setUTCFullYear(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) throw new InvalidArgumentError(expected);
  // Nothing else after the date: V8 also reads "2026-11-21 10:00 PM" and other forms in local time.
  if (!ZONED.test(text)) {
    // A zone is there but something before it is not a time (`10:00,5Z`): asking for a zone would mislead.
    if ((!ZONELESS.test(text) && !/^\d{4}-\d{2}-\d{2}[T ]/i.test(text)) || WITH_ZONE.test(text))
      throw new InvalidArgumentError(expected);
    throw new InvalidArgumentError(
      'A time of day needs its time zone: add Z for UTC or an offset such as +01:00 (2026-11-21T10:00:00Z).',
    );
  }
  // `new Date` reads the fraction after a full stop only.
  const date = new Date(text.replace(FRACTION_COMMA, '.').replace(HOURS_ONLY_OFFSET, '$1:00'));
  const utcYear = date.getUTCFullYear();
  if (Number.isNaN(date.getTime()) || utcYear < 1 || utcYear > 9999) throw new InvalidArgumentError(expected);
  return date;
}

export const isoTime = (value: string): Date => dateTime(value, `Expected ${TIME_EXAMPLE}.`);

export const oneOf =
  <T extends string>(values: readonly T[]) =>
  (value: string): T => {
    if (!(values as readonly string[]).includes(value))
      throw new InvalidArgumentError(`Expected one of: ${values.join(', ')}.`);
    return value as T;
  };

/** Said when a password is to be asked for but nobody is at a terminal to type it. */
export const NO_TERMINAL_FOR_PASSWORD =
  'There is no terminal to ask for the password: pipe it in with --password-stdin.';

/**
 * Reads a password: with `fromStdin` (`--password-stdin`), the whole of standard input, never prompted for
 * even on a terminal; otherwise one line typed without echo at a prompt, refused when standard input is
 * not a terminal (a script that forgot the flag, or a cron job with nobody to type, was read as if the
 * flag were given, and the flag changed nothing). Bytes that are not UTF-8 are refused: decoding them to
 * U+FFFD would set a password nobody could type. Standard input is read up to what `maxLength`
 * characters and a line break can take: `yes |` or `< /dev/zero` was read until the process ran out of
 * memory (3.5 GB within 15 s), and a pipe that never closes hung.
 */
export async function readPassword(
  prompt: string,
  maxLength: number,
  options: { fromStdin: boolean },
): Promise<string> {
  if (options.fromStdin) {
    // A UTF-16 unit takes at most 3 bytes in UTF-8 (4 for a pair), plus "\r\n".
    const maxBytes = maxLength * 4 + 2;
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of process.stdin) {
      chunks.push(chunk as Buffer);
      bytes += (chunk as Buffer).length;
      // Leaving the loop closes standard input: the writer is told, not kept waiting.
      if (bytes > maxBytes)
        throw new InvalidArgumentError(`The password must be at most ${maxLength} characters.`);
    }
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks)).replace(/\r?\n$/, '');
    } catch {
      throw new InvalidArgumentError('The password on standard input is not UTF-8 text.');
    }
  }
  if (!process.stdin.isTTY) throw new InvalidArgumentError(NO_TERMINAL_FOR_PASSWORD);
  // On standard error, as the bars and messages: with standard output in a file (`> added.txt`) the
  // prompt went into it, and the operator, seeing nothing, did not know the command waited for them.
  process.stderr.write(prompt);
  process.stdin.setRawMode(true);
  process.stdin.resume();
  let value = '';
  return new Promise((resolve) => {
    const done = () => {
      process.stdin.setRawMode(false);
      process.stdin.pause();
      process.stdin.off('data', onData);
      process.stderr.write('\n');
    };
    const onData = (data: Buffer) => {
      for (const char of data.toString('utf8')) {
        // Ctrl-D ends the input, as it does on a pipe.
        if (char === '\r' || char === '\n' || char === '\u0004') {
          done();
          return resolve(value);
        }
        // Ctrl-C, which raw mode turned into a character: end as the key ends any command (exit 130),
        // with the terminal restored and nothing done. It failed with a stack trace.
        if (char === '\u0003') {
          done();
          process.kill(process.pid, 'SIGINT');
          return;
        }
        value = char === '\u007f' ? value.slice(0, -1) : value + char;
      }
    };
    process.stdin.on('data', onData);
  });
}

/** An event position (a whole number) or a date-time, for `--from` / `--to`. */
export const positionOrTime = (value: string): { position: number } | { time: Date } => {
  if (/^\d+$/.test(value.trim())) {
    const position = Number(value);
    if (!Number.isSafeInteger(position))
      throw new InvalidArgumentError(
        `Expected an event position up to ${Number.MAX_SAFE_INTEGER.toLocaleString('en-US')}.`,
      );
    return { position };
  }
  return { time: dateTime(value, `Expected an event position (a whole number) or ${TIME_EXAMPLE}.`) };
};

/**
 * A comma-separated list, collected over repeated flags. A value with no item in it is refused: an
 * empty `--type "$TYPES"` exported the whole log.
 */
export const list = (value: string, previous: string[] = []): string[] => {
  const items = value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  if (items.length === 0) throw new InvalidArgumentError('Expected one or more names, comma-separated.');
  return [...previous, ...items];
};

/**
 * A flag that takes one value, refused when given again with another: the last one was kept silently
 * (`--role viewer … --role admin` added an admin, `--stream A --stream B` exported stream B alone).
 */
export const onlyOnce = <T = string>(parse: (value: string) => T = (value) => value as T) => {
  let first: string | undefined;
  return (value: string): T => {
    if (first !== undefined && value !== first)
      throw new InvalidArgumentError(`It was already given as ${JSON.stringify(first)}; give it once.`);
    first = value;
    return parse(value);
  };
};

/**
 * Text as it was typed: an argument holding U+FFFD ("�") is refused. Node reads the command line as UTF-8
 * and puts U+FFFD for bytes that are not (é typed on a Latin-1 terminal is the byte 0xE9), and `npm run
 * cli` goes through tsx, which hands the already-decoded text on to the command's process as UTF-8: there
 * the lost bytes cannot be told from a U+FFFD typed on purpose, which nobody puts in a name or an email.
 * Stored, "Café" would have been the user "Caf�".
 */
export const typedText = (value: string): string => {
  if (value.includes('\uFFFD'))
    throw new InvalidArgumentError(
      'It holds "�" (U+FFFD), what bytes that are not UTF-8 are read as: set the terminal to UTF-8 (such as LANG=C.UTF-8) and type it again.',
    );
  return value;
};

/** Non-blank text: an empty `--out "$FILE"` wrote to standard output, an empty `--stream` matched nothing. */
export const nonEmpty =
  (what: string) =>
  (value: string): string => {
    if (value.trim() === '') throw new InvalidArgumentError(`Expected ${what}.`);
    return value;
  };
