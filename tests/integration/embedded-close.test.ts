import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Runs tests/support/close-after-failure.ts; its exit code and output, or a timeout. */
function closeAfterFailure(location: string): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'tests/support/close-after-failure.ts', location],
      { cwd: root, env: { PATH: process.env.PATH ?? '' } },
    );
    let stdout = '';
    // A bound on starting (a loaded CI machine opens and migrates a database on disk slowly), and a
    // tighter one on the part under test: once it has said "still running", it must exit by itself.
    let timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (!stdout.includes('still running')) return;
      clearTimeout(timer);
      timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout });
    });
  });
}

/**
 * Closing the embedded database right after a statement failed. The caller has the error before the
 * failed statement's trailing protocol message (its Sync) has reached PGlite; closing under it made the
 * adapter write to a closed PGlite: an uncaught error in memory, and on disk a process spinning forever
 * (`npm run cli -- events:export --from 99999999999999999999999` never returned).
 */
describe('the embedded database', () => {
  it(
    'closes cleanly right after a failed statement, in memory and on disk',
    { timeout: 300_000 },
    async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'rivals-close-'));
      try {
        for (const location of ['memory://', dir]) {
          const { code, stdout } = await closeAfterFailure(location);
          expect(stdout, location).toBe(
            'failed: invalid input syntax for type bigint: "1e+23"\nclosed\nstill running\n',
          );
          expect(code, location).toBe(0);
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});
