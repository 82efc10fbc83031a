import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Starts tests/support/interrupted-export.ts, sends `signal` once it is writing its partial file, and
 * tells how it ended and what its folder held while it was writing.
 */
function interrupt(target: string, signal: NodeJS.Signals) {
  return new Promise<{ signal: NodeJS.Signals | null; whileWriting: string[] }>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'tests/support/interrupted-export.ts', target],
      {
        cwd: root,
        env: { PATH: process.env.PATH ?? '' },
      },
    );
    let whileWriting: string[] = [];
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('the export never said it was writing'));
    }, 30_000);
    child.stdout.on('data', (d: Buffer) => {
      if (!d.toString().includes('writing')) return;
      void readdir(path.dirname(target)).then((files) => {
        whileWriting = files;
        child.kill(signal);
      });
    });
    child.on('exit', (_code, ended) => {
      clearTimeout(timer);
      resolve({ signal: ended, whileWriting });
    });
  });
}

/** Ctrl-C, a kill or a closed terminal in the middle of `events:export --out`: nothing is left behind. */
describe('an interrupted export', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rivals-interrupted-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it.each(['SIGINT', 'SIGTERM', 'SIGHUP'] as const)(
    'ends by %s, removes its partial file and leaves an existing export as it was',
    async (signal) => {
      const target = path.join(dir, `${signal}.ndjson`);
      await writeFile(target, 'the previous export\n');
      const ended = await interrupt(target, signal);
      // It was interrupted mid-write: its partial file was there, beside the target.
      expect(
        ended.whileWriting.filter((f) => f.startsWith(`.${signal}.ndjson.`) && f.endsWith('.partial')),
      ).toHaveLength(1);
      // And it ended as the signal ends a process, so a shell sees 130 / 143 / 129.
      expect(ended.signal).toBe(signal);
      expect((await readdir(dir)).filter((f) => f.endsWith('.partial'))).toEqual([]);
      expect(await readFile(target, 'utf8')).toBe('the previous export\n');
    },
  );
});
