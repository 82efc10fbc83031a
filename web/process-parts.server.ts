import type { Server } from 'node:http';
import type { InstanceHeartbeat } from '#infra/instances.ts';
import type { SessionSignals } from './auth/session-signals.server.ts';
import type { Realtime } from './realtime/realtime.server.ts';
import type { Runtime } from './runtime.server.ts';

/**
 * What a server or worker process has opened so far. The start fills it in step by step; the shutdown
 * closes whatever is there, so a stop during the start closes exactly what that start had opened.
 */
export interface ProcessParts {
  runtime?: Runtime;
  signals?: SessionSignals;
  server?: Server;
  realtime?: Realtime;
  heartbeat?: InstanceHeartbeat;
  /** What the runner tells after each batch; stopped first, so nothing is sent on channels being closed. */
  stopFeeds: (() => void)[];
}

/** Stop accepting, let in-flight requests finish, then close idle keep-alive sockets and pools. */
export async function closeParts(parts: ProcessParts): Promise<void> {
  for (const stop of parts.stopFeeds) stop();
  await parts.heartbeat?.stop();
  await parts.realtime?.close();
  await parts.signals?.close();
  await new Promise<void>((resolve) => {
    const server = parts.server;
    if (!server?.listening) return resolve();
    server.close(() => resolve());
    server.closeIdleConnections();
  });
  await parts.runtime?.close();
}

/** A signal arrived while starting: the start stops at its next step, and the shutdown closes the parts. */
export class StopRequested extends Error {
  constructor() {
    super('stopped while starting');
  }
}
