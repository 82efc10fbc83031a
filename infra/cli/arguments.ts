import { InvalidArgumentError } from 'commander';
import { z } from 'zod';

/** Commander argument parsers that say what is expected; the error names the flag. */
export const wholeNumber =
  (min: number, max: number) =>
  (value: string): number => {
    const parsed = z.coerce.number().int().min(min).max(max).safeParse(value);
    if (!parsed.success) {
      throw new InvalidArgumentError(
        `Expected a whole number from ${min.toLocaleString('en-US')} to ${max.toLocaleString('en-US')}.`,
      );
    }
    return parsed.data;
  };

const TIME_EXAMPLE = 'a date-time such as 2026-11-21T10:00:00Z';

/** A date-time written out (a date at least): `new Date` alone would take "5" as the year 2001. */
function dateTime(value: string): Date | undefined {
  const date = new Date(value);
  return /^\d{4}-\d{2}-\d{2}/.test(value.trim()) && !Number.isNaN(date.getTime()) ? date : undefined;
}

export const isoTime = (value: string): Date => {
  const date = dateTime(value);
  if (!date) throw new InvalidArgumentError(`Expected ${TIME_EXAMPLE}.`);
  return date;
};

export const oneOf =
  <T extends string>(values: readonly T[]) =>
  (value: string): T => {
    if (!(values as readonly string[]).includes(value))
      throw new InvalidArgumentError(`Expected one of: ${values.join(', ')}.`);
    return value as T;
  };

/** Reads a password from stdin: the whole of a pipe, or one line typed without echo on a terminal. */
export async function readPassword(prompt: string): Promise<string> {
  if (!process.stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks)
      .toString('utf8')
      .replace(/\r?\n$/, '');
  }
  process.stdout.write(prompt);
  process.stdin.setRawMode(true);
  process.stdin.resume();
  let value = '';
  return new Promise((resolve, reject) => {
    const onData = (data: Buffer) => {
      for (const char of data.toString('utf8')) {
        if (char === '\r' || char === '\n') {
          process.stdin.setRawMode(false);
          process.stdin.pause();
          process.stdin.off('data', onData);
          process.stdout.write('\n');
          return resolve(value);
        }
        if (char === '\u0003') return reject(new Error('Cancelled.'));
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
  const date = dateTime(value);
  if (!date)
    throw new InvalidArgumentError(`Expected an event position (a whole number) or ${TIME_EXAMPLE}.`);
  return { time: date };
};

/** A comma-separated list, collected over repeated flags. */
export const list = (value: string, previous: string[] = []): string[] => [
  ...previous,
  ...value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean),
];
