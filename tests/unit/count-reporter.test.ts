import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The `N passed, N failed` line (README "Test it"; CI and `npm test` read it) agrees with the run. Each
 * case runs a real Vitest on a tiny fixture with only our reporter.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const reporter = path.join(root, 'tests/support/count-reporter.ts');
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function runFixture(source: string): { status: number | null; line: string | undefined } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'count-reporter-'));
  dirs.push(dir);
  writeFileSync(path.join(dir, 'fixture.test.js'), source);
  writeFileSync(
    path.join(dir, 'vitest.config.mjs'),
    `export default { test: { globals: true, include: ['fixture.test.js'], reporters: [${JSON.stringify(reporter)}] } };`,
  );
  const run = spawnSync(
    process.execPath,
    [
      path.join(root, 'node_modules/vitest/vitest.mjs'),
      'run',
      '--root',
      dir,
      '--config',
      'vitest.config.mjs',
    ],
    { cwd: dir, encoding: 'utf8', timeout: 25_000 },
  );
  return { status: run.status, line: run.stdout.split('\n').find((l) => /^\d+ passed, \d+ failed/.test(l)) };
}

describe('count reporter', () => {
  it('counts a suite whose setup failed as a failure, so the line never says 0 failed on a failed run', () => {
    // A beforeAll that throws skips its tests: the line said "1 passed, 0 failed, 2 skipped" and the run
    // exited 1 (a contract suite run without TEST_DATABASE_URL looked like a pass).
    const run = runFixture(`
      describe('a suite whose setup fails', () => {
        beforeAll(() => { throw new Error('setup failed'); });
        it('a', () => {});
        it('b', () => {});
      });
      it('passes', () => {});
    `);
    expect(run.status).toBe(1);
    expect(run.line).toBe('1 passed, 1 failed, 2 skipped');
  }, 30_000);

  it('counts a file whose top-level setup failed as a failure', () => {
    const run = runFixture(`
      beforeAll(() => { throw new Error('setup failed'); });
      it('a', () => {});
    `);
    expect(run.status).toBe(1);
    expect(run.line).toBe('0 passed, 1 failed, 1 skipped');
  }, 30_000);

  it('counts failed tests once each', () => {
    const run = runFixture(`
      it('fails', () => { throw new Error('no'); });
      it('passes', () => {});
    `);
    expect(run.status).toBe(1);
    expect(run.line).toBe('1 passed, 1 failed');
  }, 30_000);
});
