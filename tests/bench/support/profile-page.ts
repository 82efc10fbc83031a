/**
 * Where a /competitors request's time goes in `koa-memory` (the app's middleware stack and route with
 * the data in memory, see page-server.tsx): runs it under `node --cpu-prof`, loads it with autocannon,
 * and prints the top frames by self time (and by package/file), so a change to the per-request path
 * can be checked against the profile. Not a benchmark (no `.bench.ts`): a tool.
 *
 *   npx tsx tests/bench/support/profile-page.ts [--duration=8] [--connections=10] [--mode=koa-memory] [--top=15]
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { listCompetitors } from '#projections/competitor-list/competitor-list.queries.ts';
import { DEFAULT_PER_PAGE } from '#web/components/data-table/table-state.ts';
import { knob, textKnob } from './knobs.ts';
import { loadTest } from './load.ts';
import { recordingQueryable } from './replay-db.ts';
import { seedCompetitors } from './seed.ts';
import { freePort, spawnNode, waitForStatus } from './server-process.ts';
import { ensureAssets, openScratchPostgres, repoRoot } from './services.ts';

const seconds = knob('duration', 8);
const connections = knob('connections', 10);
const top = knob('top', 15);
const mode = textKnob('mode', 'koa-memory');

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

await ensureAssets();
const workDir = await mkdtemp(path.join(os.tmpdir(), 'rivals-profile-'));
try {
  const postgres = await openScratchPostgres({ label: 'bench_profile' });
  await seedCompetitors(postgres, DEFAULT_PER_PAGE);
  const recorder = recordingQueryable(postgres.pool);
  const result = await listCompetitors(recorder.db, {
    search: '',
    sort: undefined,
    page: 1,
    perPage: DEFAULT_PER_PAGE,
  });
  await postgres.close();
  const dataFile = path.join(workDir, 'page.json');
  await writeFile(dataFile, JSON.stringify({ result, recording: recorder.save() }));
  const profileDir = path.join(workDir, 'prof');
  const server = spawnNode(
    {
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      LOG_LEVEL: 'info',
      BENCH_PAGE_MODE: mode,
      BENCH_PAGE_DATA: dataFile,
    },
    { args: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, 'tests/bench/support/page-server.tsx'] },
  );
  await waitForStatus(server, '/competitors');
  await loadTest(`${server.url}/competitors`, { connections, seconds: 2 });
  const load = await loadTest(`${server.url}/competitors`, { connections, seconds });
  await server.stop();
  process.stdout.write(`${mode}: ${load.rps.toFixed(0)} req/s under the profiler\n`);

  const files = (await readdir(profileDir)).filter((f) => f.endsWith('.cpuprofile'));
  // The server's own process (tsx may leave a profile of its loader too): the biggest one.
  const profiles = await Promise.all(
    files.map(async (f) => JSON.parse(await readFile(path.join(profileDir, f), 'utf8')) as Profile),
  );
  const profile = profiles.sort((a, b) => b.samples.length - a.samples.length)[0];
  if (!profile) throw new Error('no profile written');
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const byFrame = new Map<string, number>();
  const byFile = new Map<string, number>();
  const short = (url: string) =>
    url.replace(`file://${repoRoot}`, '').replace(/^.*node_modules\//, 'node_modules/') || '(native)';
  for (const node of profile.nodes) {
    const us = selfUs.get(node.id) ?? 0;
    const { functionName, url, lineNumber } = node.callFrame;
    const frame = `${functionName || '(anonymous)'} ${short(url)}:${lineNumber + 1}`;
    byFrame.set(frame, (byFrame.get(frame) ?? 0) + us);
    const file = short(url)
      .replace(/^(node_modules\/(@[^/]+\/)?[^/]+).*/, '$1')
      .replace(/^node:.*/, 'node: internals');
    byFile.set(file, (byFile.get(file) ?? 0) + us);
  }
  const print = (title: string, map: Map<string, number>) => {
    process.stdout.write(`\n${title} (self time, % of ${(total / 1e6).toFixed(1)} s sampled):\n`);
    for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      process.stdout.write(`  ${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}\n`);
    }
  };
  print('top frames', byFrame);
  print('by package / file', byFile);
} finally {
  await rm(workDir, { recursive: true, force: true });
}
