// @ts-check
// Node's own modules only: they are part of Node and load at once.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// SIGHUP: the terminal was closed. Each is a request to stop, passed on so the server stops cleanly.
/** @type {NodeJS.Signals[]} */
const stopSignals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
let stopping = false;
/** @type {import('node:child_process').ChildProcess | undefined} */
let child;
// First, before anything else runs: a Ctrl+C from the very start is a request to stop, never the
// default action (an exit by the signal). Plain JavaScript, run by Node without a loader, for the same
// reason: loading tsx took some 0.3 s, during which Ctrl+C ended the supervisor by the signal.
for (const signal of stopSignals) {
  process.on(signal, () => {
    stopping = true;
    if (child) child.kill(signal);
    else process.exit(0);
  });
}

/**
 * `npm start`: runs the server as a child process and restarts it when it crashes
 * (docs/decisions/0007-crash-policy.md). Deliberately tiny and importing nothing of the app, so it has
 * nothing to crash on itself; plain JavaScript (checked by tsc through its JSDoc), so that Node runs it
 * at once and it handles Ctrl+C from its first statement. The server it starts is TypeScript, run by tsx.
 * - A child that exits 0 (a clean shutdown) ends the supervisor with 0.
 * - A child that crashes after it was ready (it sends 'ready' over IPC) is started again after a
 *   back-off of 1, 2, 4 … 30 s; a run that lasted STABLE_MS resets the back-off.
 * - A child that fails before it was ever ready on the first start (bad configuration, port in use,
 *   data folder held by another process) is not retried: its message is the answer.
 * - SIGINT/SIGTERM/SIGHUP are passed to the child; the supervisor exits with the child's code once it is gone,
 *   0 when such a signal ended a child still loading (Ctrl+C in the first seconds of `npm start`), even
 *   one that reached the child alone or before the supervisor.
 * The embedded data-folder lock names the child's pid; a crashed child's lock is taken over on restart.
 */
const entry = fileURLToPath(new URL('./main.server.ts', import.meta.url));
// Resolved from here, not from the working directory: the server's loader.
const tsx = import.meta.resolve('tsx');
const MAX_BACKOFF_MS = 30_000;
const STABLE_MS = 60_000;
const MAX_FAILED_RESTARTS = 10;

let backoff = 1_000;
let everReady = false;
let failedRestarts = 0;

/** @param {string} line */
const say = (line) => process.stderr.write(`[supervisor] ${line}\n`);

function start() {
  const startedAt = Date.now();
  let ready = false;
  const current = spawn(process.execPath, [...process.execArgv, '--import', tsx, entry], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
  });
  child = current;
  current.on('message', (message) => {
    if (message !== 'ready') return;
    ready = true;
    everReady = true;
    failedRestarts = 0;
  });
  current.on('exit', (code, signal) => {
    child = undefined;
    // A child ended by a stop signal itself was still loading its modules (its handlers, installed
    // first thing, turn a signal into a clean exit 0): nothing was open yet, and the user asked for it.
    // That counts as a stop even when this process has not run its own handler yet: a Ctrl+C reaches
    // the whole group, and the child's end (SIGCHLD) can be heard first, when the child dies on the
    // other core before this process is told of its own SIGINT (under load, ~1 start in 8).
    const endedByStopSignal = signal !== null && stopSignals.includes(signal);
    if (stopping || endedByStopSignal) return process.exit(code ?? (endedByStopSignal ? 0 : 1));
    if (code === 0) return process.exit(0);
    if (!everReady) {
      // A start that failed says why itself (one line); a kill says nothing, so say it here.
      if (signal) say(`the server stopped (${signal}) before it was ready; not restarting.`);
      return process.exit(code ?? 1);
    }
    if (!ready && ++failedRestarts > MAX_FAILED_RESTARTS) {
      say(`the server failed to start ${MAX_FAILED_RESTARTS} times in a row; giving up.`);
      return process.exit(code ?? 1);
    }
    if (Date.now() - startedAt >= STABLE_MS) backoff = 1_000;
    say(`the server stopped (${signal ?? `exit code ${code}`}); restarting in ${backoff / 1000} s.`);
    setTimeout(start, backoff);
    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
  });
}

start();
