/**
 * The server's entry (`node --import tsx web/main.server.ts`, or `npm start`'s supervisor). It handles
 * the stop signals first, before the app's modules load (one to three seconds under tsx): a stop asked
 * for meanwhile ends the process with 0 — nothing is open yet — instead of by the signal's default
 * action. Once loaded, the same handlers pass each stop to `serve`'s shutdown. They stay installed: a
 * signal is delivered to the handlers there were when it arrived, so one that came while the last
 * module ran and was still queued when its handler was removed would be lost (the server started
 * anyway, and ran on).
 */
const stopSignals = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
let stop: (signal: NodeJS.Signals) => void = () => process.exit(0);
for (const signal of stopSignals) process.on(signal, (received) => stop(received));

const { serve } = await import('./serve.server.ts');
stop = serve();

export {};
