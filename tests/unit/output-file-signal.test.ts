import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import type * as nodeFs from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';

/**
 * `events:export --out` writes through a hidden `.partial` file that a Ctrl-C must remove. A signal that
 * comes while the process has no listener for it is not queued for JavaScript: the system ends the
 * process at once. The listener was added just after the file was created, so a Ctrl-C in between
 * (CI saw it twice, under load) left the partial file behind. The real `openSync` is called; the spy
 * only notes how many Ctrl-C listeners exist at the moment the partial file is created.
 */
const listenersAtCreate = vi.hoisted(() => [] as number[]);
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof nodeFs>();
  const openSync = ((file: string, ...rest: unknown[]) => {
    if (String(file).endsWith('.partial')) listenersAtCreate.push(process.listenerCount('SIGINT'));
    return (fs.openSync as (...args: unknown[]) => number)(file, ...rest);
  }) as typeof fs.openSync;
  return { ...fs, default: { ...fs, openSync }, openSync };
});
const { writeLinesAtomically } = await import('#infra/cli/output-file.ts');

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function* lines() {
  yield 'one\n';
  yield 'two\n';
}

it('listens for Ctrl-C before the partial file exists, and stops listening once the file is in place', async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'rivals-out-'));
  const before = process.listenerCount('SIGINT');
  await writeLinesAtomically(path.join(dir, 'export.ndjson'), lines());
  expect(listenersAtCreate).toEqual([before + 1]);
  expect(process.listenerCount('SIGINT')).toBe(before);
  expect(await readFile(path.join(dir, 'export.ndjson'), 'utf8')).toBe('one\ntwo\n');
  expect(await readdir(dir)).toEqual(['export.ndjson']);
});

it('stops listening when the partial file cannot be created', async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'rivals-out-'));
  const before = process.listenerCount('SIGINT');
  await expect(writeLinesAtomically(path.join(dir, 'missing', 'export.ndjson'), lines())).rejects.toThrow(
    /cannot write .*export\.ndjson: its folder does not exist/,
  );
  expect(process.listenerCount('SIGINT')).toBe(before);
});
