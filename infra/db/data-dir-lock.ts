import { open, readFile, rm } from 'node:fs/promises';
import { makeFolder } from '../make-folder.ts';
import path from 'node:path';
import { StartupError } from '../errors.ts';

export interface DataDirLock {
  release(): Promise<void>;
}

interface Owner {
  pid: number;
  purpose: string;
  startedAt: string;
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * The embedded database belongs to one process at a time: PGlite has no locking of its own and two
 * writers would corrupt it. An exclusive lock file records the owner; a lock left by a dead process is
 * taken over; a live owner makes us refuse with a message saying what to do.
 */
export async function lockDataDir(dataDir: string, purpose: string): Promise<DataDirLock> {
  await makeFolder(dataDir).catch((error: unknown) => {
    throw unusable(dataDir, error);
  });
  const file = path.join(dataDir, 'rivals.lock');
  const me: Owner = { pid: process.pid, purpose, startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await open(file, 'wx').catch((error: unknown) => {
        throw (error as NodeJS.ErrnoException).code === 'EEXIST' ? error : unusable(dataDir, error);
      });
      await handle.writeFile(JSON.stringify(me));
      await handle.close();
      return {
        async release() {
          await rm(file, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = await readOwner(file);
      if (owner && owner.pid !== process.pid && isAlive(owner.pid)) {
        throw new StartupError(
          `The data folder ${path.resolve(dataDir)} is in use by another Rivals process (pid ${owner.pid}, ${owner.purpose}, since ${owner.startedAt}). ` +
            'Stop that process first (Ctrl+C or kill ' +
            owner.pid +
            '), or set DATA_DIR to another folder.',
        );
      }
      await rm(file, { force: true }).catch((rmError: unknown) => {
        throw new StartupError(
          `The lock file ${file} cannot be replaced (${lockReasons[(rmError as NodeJS.ErrnoException).code ?? ''] ?? (rmError as Error).message}); delete it, or set DATA_DIR to another folder.`,
        );
      });
    }
  }
  throw new StartupError(`Could not lock the data folder ${path.resolve(dataDir)}; try again.`);
}

/** Why a lock file left by a dead process could not be removed (Node's rm says ERR_FS_EISDIR for a folder). */
const lockReasons: Record<string, string> = {
  ERR_FS_EISDIR: 'it is a folder, not a file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
};

const unusableReasons: Record<string, string> = {
  EEXIST: 'it is a file, not a folder',
  ENOTDIR: 'part of its path is a file, not a folder',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
  ENOENT: 'its parent folder does not take new folders',
};

/** A data folder that cannot be made or written: one line naming DATA_DIR, not the system's error. */
function unusable(dataDir: string, error: unknown): StartupError {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  return new StartupError(
    `DATA_DIR=${dataDir} cannot be used as the data folder (${unusableReasons[code] ?? (error as Error).message}); set DATA_DIR to a folder this user can write.`,
  );
}

async function readOwner(file: string): Promise<Owner | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as Owner;
  } catch {
    return undefined;
  }
}
