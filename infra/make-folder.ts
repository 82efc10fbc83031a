import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';

/**
 * `mkdir -p`, one level at a time. Node's `mkdir(…, { recursive: true })` never returns where the
 * parent exists but refuses children with ENOENT (`DATA_DIR=/proc/rivals` hung the start, at 100% of a
 * core): it takes ENOENT as "make the parent first", finds the parent there and tries again, forever.
 * Here the first level that cannot be made fails with its own error.
 */
export async function makeFolder(folder: string): Promise<void> {
  const target = path.resolve(folder);
  const found = await kindOf(target);
  if (found === 'other') throw Object.assign(new Error(`${target} is not a folder`), { code: 'EEXIST' });
  if (found === 'folder') return;
  const missing: string[] = [];
  for (let current = target; (await kindOf(current)) === 'none'; current = path.dirname(current)) {
    missing.unshift(current);
    if (path.dirname(current) === current) break;
  }
  for (const level of missing) {
    await mkdir(level).catch((error: unknown) => {
      // Another process made it meanwhile: that is what we wanted.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    });
  }
}

async function kindOf(file: string): Promise<'folder' | 'other' | 'none'> {
  try {
    return (await stat(file)).isDirectory() ? 'folder' : 'other';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Below a file (ENOTDIR) nothing exists either: mkdir then says why.
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'none';
    throw error;
  }
}
