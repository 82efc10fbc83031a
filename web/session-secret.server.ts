import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { makeFolder } from '#infra/make-folder.ts';
import path from 'node:path';
import type { Config } from '#infra/config.ts';

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
  } catch {
    // first start
  }
  await makeFolder(config.DATA_DIR);
  const secret = randomBytes(48).toString('base64url');
  await writeFile(file, secret, { mode: 0o600 });
  return secret;
}
