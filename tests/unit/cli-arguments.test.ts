import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { InvalidArgumentError } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isoTime, positionOrTime, wholeNumber } from '#infra/cli/arguments.ts';
import { OutputFileError, writeLinesAtomically } from '#infra/cli/output-file.ts';

describe('operator command arguments', () => {
  it('takes positions up to the largest exact integer, and refuses larger ones by name', () => {
    expect(positionOrTime('42')).toEqual({ position: 42 });
    expect(positionOrTime(String(Number.MAX_SAFE_INTEGER))).toEqual({ position: Number.MAX_SAFE_INTEGER });
    // Read as 1e23 before, which the database then refused deep inside the export.
    expect(() => positionOrTime('99999999999999999999999')).toThrow(
      new InvalidArgumentError('Expected an event position up to 9,007,199,254,740,991.'),
    );
  });

  it('takes only written-out date-times: a bare number is not a year', () => {
    expect(isoTime('2026-11-21T10:00:00Z').toISOString()).toBe('2026-11-21T10:00:00.000Z');
    expect(positionOrTime('2026-11-21')).toEqual({ time: new Date('2026-11-21') });
    for (const value of ['5', '2001', 'yesterday', '2026-13-45', ''])
      expect(() => isoTime(value), value).toThrow(InvalidArgumentError);
    expect(() => positionOrTime('yesterday')).toThrow(InvalidArgumentError);
  });

  it('a time of day only with its zone, in the one written-out form (no local-time readings)', () => {
    expect(isoTime('2026-11-21 10:00+01:00').toISOString()).toBe('2026-11-21T09:00:00.000Z');
    // ISO 8601's offset of whole hours, as people write it (helper-33: refused as having no zone).
    expect(isoTime('2026-11-21T10:00+01').toISOString()).toBe('2026-11-21T09:00:00.000Z');
    expect(isoTime('2026-11-21T10:00:30-05').toISOString()).toBe('2026-11-21T15:00:30.000Z');
    expect(isoTime('2026-11-21T10:00+0100').toISOString()).toBe('2026-11-21T09:00:00.000Z');
    for (const value of [
      '2026-11-21T10:00:00',
      '2026-11-21 10:00:00 PM',
      '2026-11-21T10:00Z extra',
      '2026-11-21T10:00+1',
      '2026-11-21T10:00+012',
      '2026-11-21T10:00+25',
    ])
      expect(() => isoTime(value), value).toThrow(InvalidArgumentError);
    expect(() => isoTime('2026-11-21 10:00:00 PM')).toThrow(/time zone/);
  });

  it('a fraction of a second may follow a comma, as ISO 8601 allows', () => {
    // Read as a time of day with no zone, and refused asking for the Z that was there.
    expect(isoTime('2026-01-01T00:00:00,5Z').toISOString()).toBe('2026-01-01T00:00:00.500Z');
    expect(isoTime('2026-01-01 10:00:00,125+01:00').toISOString()).toBe('2026-01-01T09:00:00.125Z');
    expect(isoTime('2026-01-01T10:00:00,25+01').toISOString()).toBe('2026-01-01T09:00:00.250Z');
    expect(positionOrTime('2026-01-01T00:00:00,5Z')).toEqual({ time: new Date('2026-01-01T00:00:00.500Z') });
    // Still a time of day without its zone, and still one fraction only.
    expect(() => isoTime('2026-01-01T00:00:00,5')).toThrow(/time zone/);
    for (const value of [
      '2026-01-01T00:00:00,Z',
      '2026-01-01T00:00,5Z',
      '2026-01-01T00:00:00,5.5Z',
      '2026-01-01,5',
    ])
      expect(() => isoTime(value), value).toThrow(InvalidArgumentError);
    // A malformed time that has its zone is not asked for one.
    expect(() => isoTime('2026-01-01T00:00,5Z')).toThrow(
      new InvalidArgumentError('Expected a date-time such as 2026-11-21T10:00:00Z.'),
    );
  });

  it('whole numbers stay within their range', () => {
    expect(wholeNumber(1, 10)('7')).toBe(7);
    for (const value of ['0', '11', '2.5', 'lots']) expect(() => wholeNumber(1, 10)(value)).toThrow();
  });
});

describe('writing an export file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rivals-output-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  async function* lines(count: number, failAt?: number) {
    for (let i = 0; i < count; i++) {
      if (i === failAt) throw new Error('the database went away');
      yield `line ${i}\n`;
    }
  }

  it('writes every line, then puts the file in place', async () => {
    const target = path.join(dir, 'all.ndjson');
    await writeLinesAtomically(target, lines(1000));
    const text = await readFile(target, 'utf8');
    expect(text.split('\n')).toHaveLength(1001);
    expect(await readdir(dir)).toEqual(['all.ndjson']);
  });

  it('a failure midway leaves an existing file as it was and no partial file behind', async () => {
    const target = path.join(dir, 'kept.ndjson');
    await writeFile(target, 'the previous export\n');
    await expect(writeLinesAtomically(target, lines(50_000, 40_000))).rejects.toThrow(
      'the database went away',
    );
    expect(await readFile(target, 'utf8')).toBe('the previous export\n');
    expect((await readdir(dir)).filter((f) => f.includes('partial'))).toEqual([]);
  });

  it("a failure of what is exported is not blamed on the file (the command said '--out: cannot write …')", async () => {
    const target = path.join(dir, 'blameless.ndjson');
    const failure = await writeLinesAtomically(target, lines(50_000, 40_000)).catch(
      (error: unknown) => error,
    );
    expect(failure).not.toBeInstanceOf(OutputFileError);
    expect((failure as Error).message).toBe('the database went away');
    expect(await readdir(dir)).not.toContain('blameless.ndjson');
  });

  it('refuses a folder, a missing folder or one that takes no files before reading anything, saying why', async () => {
    let read = false;
    async function* watched() {
      read = true;
      yield 'x\n';
    }
    await expect(writeLinesAtomically(dir, watched())).rejects.toThrow(
      new OutputFileError(`cannot write ${dir}: it is a folder`),
    );
    const missing = path.join(dir, 'no-such-folder', 'x.ndjson');
    await expect(writeLinesAtomically(missing, watched())).rejects.toThrow(
      new OutputFileError(`cannot write ${missing}: its folder does not exist`),
    );
    // The folder is there but takes no files: the reason must not send anyone looking for it.
    await expect(writeLinesAtomically('/proc/rivals-export.ndjson', watched())).rejects.toThrow(
      new OutputFileError('cannot write /proc/rivals-export.ndjson: its folder does not take new files'),
    );
    expect(read).toBe(false);
  });
});
