import { randomBytes } from 'node:crypto';
import { link, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { makeFolder } from '#infra/make-folder.ts';
import path from 'node:path';
import type { Config } from '#infra/config.ts';
import { StartupError } from '#infra/errors.ts';

/** A secret being written is a temp file beside the final one, hidden and named per writer. */
const TEMP = /^\.session-secret\.[^/]+\.tmp$/;
/** A temp file older than this is a leftover of a crashed write (a write takes milliseconds). */
const LEFTOVER_MS = 60_000;

/**
 * SESSION_SECRET when set; in embedded mode otherwise a random secret generated once and kept in
 * DATA_DIR (readable by the owner only), so sessions survive restarts. It is written whole or not at
 * all: to a temp file in the same folder (mode 0600, synced), then linked to its name, which fails if
 * another start made it meanwhile (that one's is used). Written in place, a crash or a full disk
 * mid-write left a truncated secret that the next start used, or replaced (signing everyone out).
 */
export async function loadSessionSecret(config: Config): Promise<string> {
  if (config.SESSION_SECRET) return config.SESSION_SECRET;
  const file = path.join(config.DATA_DIR, 'session-secret');
  const existing = await readSecret(file);
  if (existing !== undefined && existing.length >= 32) return existing;
  await makeFolder(config.DATA_DIR);
  await removeLeftovers(config.DATA_DIR);
  const secret = randomBytes(48).toString('base64url');
  const temp = path.join(
    config.DATA_DIR,
    `.session-secret.${process.pid}.${randomBytes(6).toString('hex')}.tmp`,
  );
  try {
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(secret);
      await handle.sync();
    } finally {
      await handle.close();
    }
    // Too short to be one (an older version's truncated write): never used, so replacing it signs nobody out.
    if (existing !== undefined) await rename(temp, file);
    else if (!(await linkUnlessThere(temp, file))) {
      const theirs = await readSecret(file);
      if (theirs !== undefined && theirs.length >= 32) return theirs;
      throw new Error('another start made it meanwhile, and it is not a whole secret');
    }
    await syncFolder(config.DATA_DIR);
  } catch (error) {
    throw unusable(file, error);
  } finally {
    await rm(temp, { force: true });
  }
  return secret;
}

/** The secret in `file`, trimmed; undefined when there is none. Any other failure is said, never replaced. */
async function readSecret(file: string): Promise<string | undefined> {
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (error) {
    // Missing: the first start makes it. Anything else (a file of another user's, a folder) is said, never
    // replaced: a new secret would sign everyone out.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw unusable(file, error);
    return undefined;
  }
}

/**
 * Gives `temp` the name `file` unless something has it: false if it was there. Where the file system has
 * no hard links (some mounted or shared folders), renamed instead, after looking that it is not there.
 */
async function linkUnlessThere(temp: string, file: string): Promise<boolean> {
  try {
    await link(temp, file);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS' && code !== 'EOPNOTSUPP') throw error;
    if ((await readSecret(file)) !== undefined) return false;
    await rename(temp, file);
    return true;
  }
}

/** Temp files of writes that crashed (older than a write takes: a start making one now keeps its own). */
async function removeLeftovers(folder: string): Promise<void> {
  for (const name of await readdir(folder).catch(() => [])) {
    if (!TEMP.test(name)) continue;
    const temp = path.join(folder, name);
    const made = await stat(temp).catch(() => undefined);
    if (made && Date.now() - made.mtimeMs > LEFTOVER_MS)
      await rm(temp, { force: true }).catch(() => undefined);
  }
}

/** The new name itself made durable; best effort (not every file system syncs a folder). */
async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r').catch(() => undefined);
  await handle?.sync().catch(() => undefined);
  await handle?.close();
}

/** Why the file cannot be used, and what to do about it, by the system's error code. */
const reasons: Record<string, { why: string; todo: string }> = {
  EISDIR: {
    why: 'it is a folder, not a file',
    todo: 'delete that folder to make a new secret (everyone is signed out)',
  },
  EACCES: { why: 'permission denied', todo: 'fix its owner or permissions' },
  EPERM: { why: 'permission denied', todo: 'fix its owner or permissions' },
  EROFS: {
    why: 'the file system is read-only',
    todo: 'set DATA_DIR to a folder on a writable disk, or give the secret in SESSION_SECRET',
  },
  ENOSPC: { why: 'the disk is full', todo: 'free some space on the disk, then start again' },
};

/** One line naming the file and what to do, instead of the system's error and its stack. */
export function unusable(file: string, error: unknown): StartupError {
  if (error instanceof StartupError) return error;
  const reason = reasons[(error as NodeJS.ErrnoException).code ?? ''];
  return new StartupError(
    `The session secret file ${file} cannot be used (${reason?.why ?? (error as Error).message}). ` +
      (reason
        ? `To go on, ${reason.todo}.`
        : 'It must be a file this user can read and write: fix its owner or permissions, or delete it to make a new one (everyone is signed out).'),
  );
}
