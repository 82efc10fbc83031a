/**
 * Run as its own process by tests/integration/interrupted-export.test.ts: an export into `argv[2]` that
 * writes one line, says "writing" and then waits forever for the next, until a signal ends it.
 */
import { writeLinesAtomically } from '#infra/cli/output-file.ts';

async function* lines() {
  yield '{"position":1}\n';
  console.log('writing');
  await new Promise(() => setInterval(() => undefined, 60_000));
}

await writeLinesAtomically(process.argv[2] ?? 'export.ndjson', lines());
