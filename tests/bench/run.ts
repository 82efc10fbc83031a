/**
 * `npm run bench`: every `tests/bench/*.bench.ts` in turn (each a plain tsx script that prints `BENCH`
 * lines), their output streamed as it comes, then all BENCH lines together at the end.
 *
 *   npm run bench                      all scripts, small default sizes (a few minutes)
 *   npm run bench -- append worker     only scripts whose file name contains one of the words
 *   BENCH_ROUNDS=5 npm run bench       knobs by environment apply to every script (see support/knobs.ts)
 */
import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureAssets, repoRoot } from './support/services.ts';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const scripts = (await readdir(benchDir))
  .filter((file) => file.endsWith('.bench.ts'))
  .filter((file) => filters.length === 0 || filters.some((word) => file.includes(word)))
  .sort();
if (scripts.length === 0) {
  process.stderr.write(`no benchmark matches ${filters.join(', ')}\n`);
  process.exit(1);
}

// The browser bundle once for the whole run; the scripts see BENCH_ASSETS_BUILT and reuse it.
await ensureAssets();

const benchLines: string[] = [];
const failures: string[] = [];
const startedAll = Date.now();

for (const script of scripts) {
  const started = Date.now();
  process.stdout.write(`\n=== ${script}\n`);
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(benchDir, script)], {
      cwd: repoRoot,
      env: process.env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let pending = '';
    child.stdout.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('BENCH ')) benchLines.push(line);
    });
    child.once('exit', (exitCode) => {
      if (pending.startsWith('BENCH ')) benchLines.push(pending);
      resolve(exitCode);
    });
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  if (code !== 0) failures.push(`${script} (exit ${code})`);
  process.stdout.write(
    `=== ${script}: ${code === 0 ? 'done' : `FAILED with exit ${code}`} in ${seconds} s\n`,
  );
}

process.stdout.write(
  `\n=== all BENCH lines (${scripts.length} scripts, ${((Date.now() - startedAll) / 1000).toFixed(0)} s)\n`,
);
for (const line of benchLines) process.stdout.write(`${line}\n`);
if (failures.length > 0) {
  process.stdout.write(`\nfailed: ${failures.join(', ')}\n`);
  process.exitCode = 1;
}
