import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { makeFolder } from '#infra/make-folder.ts';
import path from 'node:path';
import type { Config } from '#infra/config.ts';
import { StartupError } from '#infra/errors.ts';

/**
 * SESSION_SECRET when set; in embedded mode otherwise a random secret generated once and kept in
 * DATA_DIR (readable by the owner only), so sessions survive restarts.
 */
export async function loadSessionSecret(config: Config): Promise<string> {
  if (config.SESSION_SECRET) return config.SESSION_SECRET;
  const file = path.join(config.DATA_DIR, 'session-secret');
  try {
    const existing = (await readFile(file, 'utf8')).trim();
    if (existing.length >= 32) return existing;
  } catch (error) {
    // Missing: the first start makes it. Anything else (a file of another user's, a folder) is said, never
    // replaced: a new secret would sign everyone out.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw unusable(file, error);
  }
  await makeFolder(config.DATA_DIR);
  const secret = randomBytes(48).toString('base64url');
  await writeFile(file, secret, { mode: 0o600 }).catch((error: unknown) => {
    throw unusable(file, error);
  });
  return secret;
}

const reasons: Record<string, string> = {
  EISDIR: 'it is a folder, not a file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
};

/** One line naming the file and what to do, instead of the system's error and its stack. */
function unusable(file: string, error: unknown): StartupError {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  return new StartupError(
    `The session secret file ${file} cannot be used (${reasons[code] ?? (error as Error).message}). It must be a file this user can read and write: fix its owner or permissions, or delete it to make a new one (everyone is signed out).`,
  );
}
