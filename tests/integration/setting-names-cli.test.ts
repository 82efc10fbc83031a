import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Runs an operator command with `env` added to a bare environment; its exit code and standard error. */
function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'web/cli.server.ts', ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

/**
 * A misspelt setting was ignored without a word: `DATABSE_URL=postgres://… npm run cli -- migrate`
 * migrated the embedded database in ./data and said nothing of the Postgres the operator meant.
 */
describe('a misspelt setting in the environment', { timeout: 120_000 }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rivals-setting-names-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('is named on standard error with the setting it looks like, and the command still runs', async () => {
    const { code, stderr } = await run(['migrate'], {
      DATA_DIR: dir,
      DATABSE_URL: 'postgres://nowhere.invalid/rivals',
    });
    expect(code).toBe(0);
    expect(stderr).toContain(
      'Warning: The environment variable DATABSE_URL is not a Rivals setting, so it is ignored: did you mean DATABASE_URL?',
    );
  });

  it('says nothing when every variable is a setting or unrelated', async () => {
    const { code, stderr } = await run(['migrate'], { DATA_DIR: dir, HOME: os.tmpdir(), TERM: 'dumb' });
    expect(code).toBe(0);
    expect(stderr).not.toContain('Warning:');
  });
});
