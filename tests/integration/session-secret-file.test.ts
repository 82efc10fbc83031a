import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Config } from '#infra/config.ts';
import { loadSessionSecret } from '#web/session-secret.server.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const folders: string[] = [];
afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

/** A data folder of its own, and the configuration of an embedded start in it. */
async function dataDir(): Promise<{ dir: string; config: Config }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rivals-secret-'));
  folders.push(dir);
  return { dir, config: { DATA_DIR: dir, SESSION_SECRET: undefined } as unknown as Config };
}

/** Another process's first start making the secret in `dir`: what it printed (its secret). */
function secretOfAnotherProcess(dir: string): Promise<string> {
  const script = `import { loadSessionSecret } from '#web/session-secret.server.ts';
process.stdout.write(await loadSessionSecret({ DATA_DIR: ${JSON.stringify(dir)} }));`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '' },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(err))));
  });
}

describe('the session secret file of an embedded start', () => {
  it('a temp file left by a crashed write is ignored and cleaned; the secret is made whole, owner-only', async () => {
    const { dir, config } = await dataDir();
    // As a start that died mid-write leaves it: a part of a secret, under the temp name.
    const leftover = path.join(dir, '.session-secret.4242.abcdef012345.tmp');
    await writeFile(leftover, 'k3Jd9', { mode: 0o600 });
    const hourAgo = new Date(Date.now() - 3_600_000);
    await utimes(leftover, hourAgo, hourAgo);
    const secret = await loadSessionSecret(config);
    expect(secret).toMatch(/^[A-Za-z0-9_-]{64}$/);
    const file = path.join(dir, 'session-secret');
    expect(await readFile(file, 'utf8')).toBe(secret);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    // Nothing but the secret is left in the folder.
    expect(await readdir(dir)).toEqual(['session-secret']);
    // The next start uses it.
    expect(await loadSessionSecret(config)).toBe(secret);
  });

  it('a temp file being written now (another start) is left to it; a secret cut short by an older version is replaced whole', async () => {
    const { dir, config } = await dataDir();
    const writing = path.join(dir, '.session-secret.4343.0123456789ab.tmp');
    await writeFile(writing, 'half', { mode: 0o600 });
    // Written in place before, a crash left the first bytes: too short to be a secret, never used.
    await writeFile(path.join(dir, 'session-secret'), 'k3Jd9', { mode: 0o600 });
    const secret = await loadSessionSecret(config);
    expect(secret).toMatch(/^[A-Za-z0-9_-]{64}$/);
    expect(await readFile(path.join(dir, 'session-secret'), 'utf8')).toBe(secret);
    expect((await readdir(dir)).sort()).toEqual(['.session-secret.4343.0123456789ab.tmp', 'session-secret']);
  });

  it('starts racing for the first secret end with one, which all of them use', async () => {
    const { dir, config } = await dataDir();
    // Two in this process and two others: written in place, each start wrote and used its own.
    const secrets = await Promise.all([
      loadSessionSecret(config),
      loadSessionSecret(config),
      secretOfAnotherProcess(dir),
      secretOfAnotherProcess(dir),
    ]);
    const kept = await readFile(path.join(dir, 'session-secret'), 'utf8');
    expect(kept).toMatch(/^[A-Za-z0-9_-]{64}$/);
    expect(secrets).toEqual([kept, kept, kept, kept]);
    expect(await readdir(dir)).toEqual(['session-secret']);
  });
});
