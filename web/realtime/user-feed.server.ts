import type { ProjectionRunner } from '#projections/runner.ts';
import type { SessionSignals } from '../auth/session-signals.server.ts';

const userChanges = new Set([
  'UserRoleChanged',
  'UserDisabled',
  'UserEnabled',
  'UserPasswordReset',
  'UserPasswordChanged',
]);

/**
 * The reactor that keeps live sockets honest: once the user list shows a role change or a disabled
 * account (so a re-check reads the new state), every instance is told to re-check that user's sockets.
 * It runs wherever projections run — the worker in scaled mode — and reaches the web instances through
 * the signals' Redis channel.
 */
export function startUserFeed(runner: ProjectionRunner, signals: SessionSignals): () => void {
  return runner.onCommitted((projection, events) => {
    if (projection !== 'user-list') return;
    const users = new Set<string>();
    for (const event of events) {
      const userId = (event.data as { userId?: unknown }).userId;
      if (userChanges.has(event.type) && typeof userId === 'string') users.add(userId);
    }
    for (const userId of users) void signals.publish({ kind: 'user-changed', userId });
  });
}
