/**
 * Cold start: from spawning `node --import tsx web/main.server.ts` to the first 200 on /readyz, and to
 * the first 200 of /competitors for a signed-in user (sign-in included, as a person would do it).
 * Cases: embedded first start (fresh DATA_DIR), embedded restart (same DATA_DIR), real Postgres (a
 * fresh database each run). Runs are interleaved so machine noise spreads over all cases.
 *
 *   npx tsx tests/bench/cold-start.bench.ts [--runs=3] [--cases=embedded-first,embedded-restart,postgres]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { caseKnob, knob } from './support/knobs.ts';
import { freePort, signIn, spawnNode, waitForStatus } from './support/server-process.ts';
import { createScratchDatabase, ensureAssets } from './support/services.ts';
import { reportMachine } from './support/machine.ts';
import { medianSpread, report } from './support/stats.ts';

const runs = knob('runs', 3);
const cases = caseKnob('cases', ['embedded-first', 'embedded-restart', 'postgres'] as const);
const ADMIN_EMAIL = 'bench-admin@rivals.test';
const ADMIN_PASSWORD = 'a-long-bench-password';

interface Timing {
  readyMs: number;
  competitorsMs: number;
}

async function coldStart(env: Record<string, string>): Promise<Timing> {
  const port = await freePort();
  const started = performance.now();
  const server = spawnNode({
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    ...env,
  });
  try {
    await waitForStatus(server, '/readyz', { intervalMs: 5 });
    const readyMs = performance.now() - started;
    const cookie = await signIn(server.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    const response = await fetch(`${server.url}/competitors`, {
      headers: { Cookie: cookie },
      redirect: 'manual',
    });
    await response.arrayBuffer();
    if (response.status !== 200)
      throw new Error(`/competitors answered ${response.status}:\n${server.output()}`);
    return { readyMs, competitorsMs: performance.now() - started };
  } finally {
    await server.stop();
  }
}

await ensureAssets();
const timings = new Map<string, Timing[]>(cases.map((c) => [c, []]));
const record = (name: string, timing: Timing) => {
  timings.get(name)?.push(timing);
  process.stdout.write(
    `  ${name}: readyz ${timing.readyMs.toFixed(0)} ms, /competitors ${timing.competitorsMs.toFixed(0)} ms\n`,
  );
};

for (let run = 1; run <= runs; run++) {
  process.stdout.write(`cold start, run ${run}/${runs}\n`);
  if (cases.includes('embedded-first') || cases.includes('embedded-restart')) {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'rivals-bench-cold-'));
    try {
      const first = await coldStart({ DATA_DIR: dataDir });
      if (cases.includes('embedded-first')) record('embedded-first', first);
      if (cases.includes('embedded-restart'))
        record('embedded-restart', await coldStart({ DATA_DIR: dataDir }));
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  if (cases.includes('postgres')) {
    const scratch = await createScratchDatabase('bench_cold');
    try {
      record('postgres', await coldStart({ DATABASE_URL: scratch.url, SESSION_SECRET: 'b'.repeat(40) }));
    } finally {
      await scratch.drop();
    }
  }
}

for (const [name, list] of timings) {
  const ready = medianSpread(list.map((t) => t.readyMs));
  const page = medianSpread(list.map((t) => t.competitorsMs));
  report(`cold-start.${name}`, {
    runs: list.length,
    readyz_ms: ready.median,
    readyz_min: ready.min,
    readyz_max: ready.max,
    competitors_ms: page.median,
    competitors_min: page.min,
    competitors_max: page.max,
  });
}
reportMachine('cold-start');
