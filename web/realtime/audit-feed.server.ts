import type { ProjectionRunner } from '#projections/runner.ts';
import type { AuditMessage } from './audit-message.ts';
import { markOf } from './live-mark.ts';
import { AUDIT_ROOM, type Realtime } from './realtime.server.ts';

/**
 * The reactor for the audit page: after an audit-log batch commits (so its lines are readable), tell the
 * browsers that may read it how far it goes. Every line, not only competitor changes (which the change
 * feed announces once the competitor list has them): a user added, disabled or given another role, a
 * rebuild, a dead letter retried or discarded reach no other read model a page follows.
 */
export function startAuditFeed(runner: ProjectionRunner, realtime: Realtime): () => void {
  return runner.onCommitted((projection, events, checkpoint) => {
    if (projection !== 'audit-log' || events.length === 0) return;
    const message: AuditMessage = { mark: markOf(checkpoint), position: checkpoint.position };
    realtime.broadcast(AUDIT_ROOM, 'audit', message);
  });
}
