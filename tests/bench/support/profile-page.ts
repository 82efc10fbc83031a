/**
 * Where a /competitors request's time goes: runs a server under `node --cpu-prof`, loads it with
 * autocannon, and prints the top frames by self time, by inclusive time (our own code: middleware,
 * route, page) and by package/file, in µs per request over the measured load only (start-up and
 * warm-up are left out), so a change to the per-request path can be checked against the profile.
 * Not a benchmark (no `.bench.ts`): a tool.
 *
 * Modes: `koa-memory` and `bare` (see page-server.tsx), `koa-postgres` (the real app on Postgres,
 * signed in).
 *
 *   npx tsx tests/bench/support/profile-page.ts [--duration=8] [--connections=10] [--mode=koa-memory] [--top=15]
 *     [--keep=dir] (copies the .cpuprofile there, to open in Chrome DevTools)
 */
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { listCompetitors } from '#projections/competitor-list/competitor-list.queries.ts';
import { DEFAULT_PER_PAGE } from '#web/components/data-table/table-state.ts';
import { knob, textKnob } from './knobs.ts';
import { loadTest } from './load.ts';
import { memorySession } from './memory-session.ts';
import { recordingQueryable } from './replay-db.ts';
import { seedCompetitors } from './seed.ts';
import { freePort, signIn, spawnNode, waitForStatus, type ServerProcess } from './server-process.ts';
import { ensureAssets, openScratchPostgres, repoRoot } from './services.ts';

const seconds = knob('duration', 8);
const connections = knob('connections', 10);
const top = knob('top', 15);
const mode = textKnob('mode', 'koa-memory');
const keep = textKnob('keep', '');
if (!['koa-memory', 'bare', 'koa-postgres'].includes(mode)) {
  throw new Error('--mode must be koa-memory, bare or koa-postgres');
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const ADMIN_EMAIL = 'bench-admin@rivals.test';
const ADMIN_PASSWORD = 'a-long-bench-password';

await ensureAssets();
const workDir = await mkdtemp(path.join(os.tmpdir(), 'rivals-profile-'));
const postgres = await openScratchPostgres({ label: 'bench_profile' });
let server: ServerProcess | undefined;
try {
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
  const real = mode === 'koa-postgres';
  const env: Record<string, string> = real
    ? {
        LOG_LEVEL: 'info',
        ADMIN_EMAIL,
        ADMIN_PASSWORD,
        DEMO_DATA: 'false',
        DATABASE_URL: postgres.url,
        SESSION_SECRET: 'b'.repeat(40),
      }
    : {
        LOG_LEVEL: 'info',
        BENCH_PAGE_MODE: mode,
        BENCH_PAGE_DATA: dataFile,
      };
  const entry = real ? 'web/main.server.ts' : 'tests/bench/support/page-server.tsx';
  server = spawnNode(
    { HOST: '127.0.0.1', PORT: String(await freePort()), ...env },
    { args: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, entry] },
  );
  await waitForStatus(server, real ? '/readyz' : mode === 'bare' ? '/competitors' : '/healthz');
  const cookie = real
    ? await signIn(server.url, ADMIN_EMAIL, ADMIN_PASSWORD)
    : mode === 'koa-memory'
      ? memorySession.cookie
      : '';
  const headers = cookie ? { Cookie: cookie } : undefined;
  await loadTest(`${server.url}/competitors`, { connections, seconds: 2, headers });
  const load = await loadTest(`${server.url}/competitors`, { connections, seconds, headers });
  await server.stop();
  process.stdout.write(`${mode}: ${load.rps.toFixed(0)} req/s under the profiler\n`);

  const files = (await readdir(profileDir)).filter((f) => f.endsWith('.cpuprofile'));
  // The server's main thread (tsx's loader thread writes a profile too, mostly idle): the busiest one.
  const profiles = await Promise.all(
    files.map(async (f) => ({
      file: f,
      profile: JSON.parse(await readFile(path.join(profileDir, f), 'utf8')) as Profile,
    })),
  );
  const biggest = profiles.sort((a, b) => busyUs(b.profile) - busyUs(a.profile))[0];
  if (!biggest) throw new Error('no profile written');
  const { profile } = biggest;
  if (keep) {
    await mkdir(keep, { recursive: true });
    await copyFile(path.join(profileDir, biggest.file), path.join(keep, `${mode}.cpuprofile`));
  }
  printProfile(profile, load.requests, seconds);
} finally {
  await server?.stop();
  await postgres.drop();
  await rm(workDir, { recursive: true, force: true });
}

/** Sampled time not spent idle. */
function busyUs(profile: Profile): number {
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  return profile.samples.reduce((sum, id, i) => sum + (idle.has(id) ? 0 : (profile.timeDeltas[i] ?? 0)), 0);
}

/** Self and inclusive time per frame over the load's last `loadSeconds`, in µs per request. */
function printProfile(profile: Profile, requests: number, loadSeconds: number): void {
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const short = (url: string) =>
    url.replace(`file://${repoRoot}`, '').replace(/^.*node_modules\//, 'node_modules/') || '(native)';
  const frameOf = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    return `${functionName || '(anonymous)'} ${short(url)}:${lineNumber + 1}`;
  };
  const fileOf = (node: ProfileNode) =>
    short(node.callFrame.url)
      .replace(/^(node_modules\/(@[^/]+\/)?[^/]+).*/, '$1')
      .replace(/^node:.*/, 'node: internals');
  const ours = (node: ProfileNode) =>
    node.callFrame.url.startsWith(`file://${repoRoot}`) && !node.callFrame.url.includes('node_modules');

  // Only the measured load: the samples of its last `loadSeconds` before the process stopped (the
  // stop itself takes a few ms).
  const from = profile.endTime - loadSeconds * 1e6;
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const byFile = new Map<string, number>();
  let at = profile.startTime;
  let total = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    const node = byId.get(id);
    if (at < from || !node) return;
    total += delta;
    self.set(frameOf(node), (self.get(frameOf(node)) ?? 0) + delta);
    byFile.set(fileOf(node), (byFile.get(fileOf(node)) ?? 0) + delta);
    const seen = new Set<string>();
    for (let n: ProfileNode | undefined = node; n; n = byId.get(parent.get(n.id) ?? -1)) {
      const frame = frameOf(n);
      if (!ours(n) || seen.has(frame)) continue;
      seen.add(frame);
      inclusive.set(frame, (inclusive.get(frame) ?? 0) + delta);
    }
  });
  const print = (title: string, map: Map<string, number>) => {
    process.stdout.write(
      `\n${title} (µs per request and % of ${(total / 1e6).toFixed(1)} s sampled, ${requests} requests):\n`,
    );
    for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      process.stdout.write(
        `  ${(us / requests).toFixed(1).padStart(6)} µs ${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}\n`,
      );
    }
  };
  print('top frames by self time', self);
  print('our frames by inclusive time', inclusive);
  print('by package / file', byFile);
}
