/**
 * The server's entry (`node --import tsx web/main.server.ts`, or `npm start`'s supervisor). It handles
 * the stop signals first, before the app's modules load (one to three seconds under tsx): a stop asked
 * for meanwhile ends the process with 0 — nothing is open yet — instead of by the signal's default
 * action; so does its supervisor going away (npm start). Once loaded, the same handlers pass each stop to
 * `serve`'s shutdown; one more, a second or more later (Ctrl+C again), ends the process at once with
 * 1. They stay installed: a signal is delivered to the handlers there were when it
 * arrived, so one that came while the last module ran and was still queued when its handler was removed
 * would be lost (the server started anyway, and ran on).
 */
const stopSignals = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
/**
 * A stop signal this long after the first is a second request: stop now, without waiting for the rest
 * of the shutdown (a long migration under way, say; it is one transaction, so the database rolls it
 * back). Sooner, it is the same request again: under `npm start` one Ctrl+C reaches this process two or
 * three times within milliseconds (from the terminal, and passed on by npm and by the supervisor).
 */
const SECOND_STOP_AFTER_MS = 1_000;
let stop: (reason: string) => void = () => process.exit(0);
let firstStopAt: number | undefined;
const stopRequested = (reason: string) => {
  firstStopAt ??= Date.now();
  stop(reason);
};
for (const signal of stopSignals)
  process.on(signal, (received) => {
    if (firstStopAt !== undefined && Date.now() - firstStopAt >= SECOND_STOP_AFTER_MS) {
      process.stderr.write(`Stopping now (${received} again), without finishing the shutdown.\n`);
      process.exit(1);
    }
    stopRequested(received);
  });
// Under the supervisor (npm start) the IPC channel closes when the supervisor dies, even SIGKILLed: nobody
// would restart or stop this process any more, and it would keep the port and the data folder from the
// next `npm start`. Heard from here too: a supervisor gone while the modules loaded left a server that
// went on to start in full (a first start's admin created, its password printed to nobody), then died
// of telling the gone supervisor it was ready.
process.on('disconnect', () => stopRequested('supervisor gone'));
// One gone before this first statement ran (tsx takes a while to load it) was heard by nobody.
if (process.send && !process.connected) stopRequested('supervisor gone');

const { serve } = await import('./serve.server.ts');
stop = serve();

export {};
