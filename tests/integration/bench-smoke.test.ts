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
        BENCH_REDIS_URL: process.env.TEST_REDIS_URL ?? '',
        // Use the bundle the test run was given. A bench otherwise rebuilds dist/assets (emptied first),
        // and every test file starting an app meanwhile found no bundle: 'The browser bundle is missing'.
        BENCH_ASSETS_BUILT: '1',
        ...(process.env.CHROMIUM_PATH ? { CHROMIUM_PATH: process.env.CHROMIUM_PATH } : {}),
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

/**
 * Every other bench in its smallest form, for the same reason: nothing else runs them, so a change to the
 * product can break one unnoticed. Only the exit code and the printed figures' names (plus any failure
 * counts the bench reports) are looked at, never a timing. Left out: deep-pages (its smallest data set
 * is 100k seeded competitors, minutes of seeding) and data-table (it needs a seeded database of its own,
 * BENCH_1M_DATABASE_URL).
 */
const smallBenches: { script: string; args: string[]; printed: RegExp[] }[] = [
  {
    script: 'append.bench.ts',
    args: ['--rounds=1', '--duration=1', '--writers=1', '--subjects=event-store,plain-insert'],
    printed: [
      /BENCH append\.postgres\.writers-1\.ratio\.event-store-vs-plain pct=/,
      /BENCH append\.embedded\.writers-1\.ratio\.event-store-vs-plain pct=/,
    ],
  },
  {
    script: 'cold-start.bench.ts',
    args: ['--runs=1', '--cases=postgres'],
    printed: [/BENCH cold-start\.postgres runs=1 readyz_ms=/],
  },
  {
    script: 'drag-sort.bench.ts',
    args: ['--size=200', '--rounds=1', '--reps=2', '--items=20', '--drops=5'],
    printed: [/BENCH drag-sort\.decide items=/, /BENCH drag-sort\.drop-to-second-browser items=20 drops=5 /],
  },
  {
    script: 'end-to-end.bench.ts',
    args: [
      '--rounds=1',
      '--duration=1',
      '--clients=2',
      '--competitors=5',
      '--baseline-duration=1',
      '--latency-duration=1',
    ],
    printed: [/BENCH end-to-end\.sustained .*failed=0 /, /BENCH end-to-end\.latency\.command-to-projected /],
  },
  {
    script: 'history-pages.bench.ts',
    args: ['--sizes=2000', '--others=100', '--rounds=1', '--reps=1'],
    printed: [/BENCH history-pages\.2000\.all\.last /, /BENCH history-pages\.2000\.worst vs_page_1=/],
  },
  {
    script: 'live-refresh.bench.ts',
    args: ['--tables=2', '--rate=2', '--competitors=20', '--duration=1', '--rounds=1'],
    printed: [/BENCH live-refresh affected-only tables=2 /, /BENCH live-refresh ratio /],
  },
  {
    script: 'notes.bench.ts',
    args: [
      '--parts=throughput',
      '--clients=2',
      '--competitors=5',
      '--apps=1',
      '--rounds=1',
      '--duration=1',
      '--warmup=0',
      '--baseline-duration=1',
    ],
    printed: [/BENCH notes\.update-note .*failed=0 not_visible=0/],
  },
  {
    script: 'replay.bench.ts',
    args: ['--competitors=100', '--rounds=1'],
    printed: [/BENCH replay-all-100 events=\d+ /],
  },
  {
    script: 'worker-drain.bench.ts',
    args: ['--messages=200', '--rounds=1', '--competitors=4'],
    printed: [
      /BENCH worker-drain\.worker rounds=1 messages=200 /,
      /BENCH worker-drain\.ratio\.worker-vs-raw /,
    ],
  },
  {
    script: 'support/profile-page.ts',
    args: ['--duration=1', '--connections=2'],
    printed: [/koa-memory: \d+ req\/s under the profiler/, /top frames by self time/],
  },
];

describe.each(runs('postgres') ? ['postgres'] : [])('the other benches on %s', () => {
  it.each(smallBenches)(
    '$script runs to the end in its smallest form',
    async ({ script, args, printed }) => {
      const { code, output } = await runBench(script, args);
      expect(code, output).toBe(0);
      for (const line of printed) expect(output).toMatch(line);
    },
    120_000,
  );
});
