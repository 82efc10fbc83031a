import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lockDataDir } from '#infra/db/data-dir-lock.ts';
import { openEmbeddedDatabase } from '#infra/db/open-embedded.ts';
import { StartupError } from '#infra/errors.ts';

/**
 * A part of the data folder that is not what Rivals keeps there (a folder where its lock file goes, a file
 * where its database folder goes: a careless copy or restore) stops the start with one line naming it and
 * what to do (serve.server.ts prints a StartupError's message alone), not Node's error and its stack.
 */
const dirs: string[] = [];
afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));
const tempDir = async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rivals-parts-'));
  dirs.push(dir);
  return dir;
};

describe('a data folder whose parts are not what Rivals keeps there', () => {
  it('a folder where the lock file goes is named, with what to do', async () => {
    const dataDir = await tempDir();
    await mkdir(path.join(dataDir, 'rivals.lock'));
    const error = await lockDataDir(dataDir, 'test').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartupError);
    expect((error as Error).message).toBe(
      `The lock file ${path.join(dataDir, 'rivals.lock')} cannot be replaced (it is a folder, not a file); delete it, or set DATA_DIR to another folder.`,
    );
  });

  it('a file where the database folder goes is named, with what to do', async () => {
    const dataDir = await tempDir();
    await writeFile(path.join(dataDir, 'pgdata'), 'not a database');
    const error = await openEmbeddedDatabase(dataDir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartupError);
    expect((error as Error).message).toBe(
      `The database in ${path.join(dataDir, 'pgdata')} could not be opened (it is a file, not a folder). Nothing was changed. Restore the data folder from a backup, or set DATA_DIR to a new folder to start empty.`,
    );
  });
});
