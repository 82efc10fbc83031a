import { cp, mkdtemp, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StorageMissingError, type Database } from '#infra/db/database.ts';
import { openEmbeddedDatabase } from '#infra/db/open-embedded.ts';

/**
 * Whether the embedded database can still store anything (the storage guard asks before every write):
 * PGlite keeps writing into the files it opened, so a folder that is not those files any more must be
 * said to be so, not only a folder that is gone (decision 0012: an answer is a promise).
 */
describe('the embedded data folder under a running database', () => {
  let dir = '';
  let db: Database;
  const pgdata = () => path.join(dir, 'pgdata');

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rivals-storage-'));
    db = await openEmbeddedDatabase(dir);
  }, 120_000);
  afterAll(async () => {
    await db?.close().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  it('is fine while in place, and after being moved away and back (the same files)', async () => {
    await expect(db.checkStorage?.()).resolves.toBeUndefined();
    await rename(pgdata(), `${pgdata()}-away`);
    await expect(db.checkStorage?.()).rejects.toThrow(StorageMissingError);
    await rename(`${pgdata()}-away`, pgdata());
    await expect(db.checkStorage?.()).resolves.toBeUndefined();
  });

  it('is refused once the folder was replaced by a copy (a backup restored while running)', async () => {
    await cp(pgdata(), `${pgdata()}-copy`, { recursive: true });
    await rename(pgdata(), `${pgdata()}-old`);
    await rename(`${pgdata()}-copy`, pgdata());
    const check = db.checkStorage?.();
    await expect(check).rejects.toThrow(StorageMissingError);
    await expect(check).rejects.toThrow(/was replaced while Rivals was running/);
  });
});
