import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runs } from '#tests/support/environment.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Runs a bench script to its end; its exit code and output. */
function runBench(script: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `tests/bench/${script}`, ...args], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        BENCH_DATABASE_URL: process.env.TEST_DATABASE_URL ?? '',
      },
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

/**
 * The page benchmark in its smallest form (one short round), so a change to what a route needs from its
 * dependencies cannot break the bench's in-memory server unnoticed: it answered 500 at its first request
 * for a whole stop after searches began taking turns (deps.searchReads), and only a bench run showed it.
 * Timings are not looked at: only that every subject answered and the figures were printed.
 */
describe.each(runs('postgres') ? ['postgres'] : [])('the competitors-page bench on %s', () => {
  it('runs bare, koa-memory and the real app on Postgres to the end, with no failed request', async () => {
    const { code, output } = await runBench('competitors-page.bench.ts', [
      '--subjects=bare,koa-memory,koa-postgres',
      '--rounds=1',
      '--duration=1',
      '--warmup=0',
    ]);
    expect(code, output).toBe(0);
    for (const subject of ['bare', 'koa-memory', 'koa-postgres']) {
      expect(output).toMatch(new RegExp(`BENCH competitors-page\\.${subject} .*failures=0`));
    }
    expect(output).toMatch(/BENCH competitors-page\.ratio\.koa-memory-vs-bare rps_pct=[\d.]+/);
  }, 240_000);
});
