import { isCompetitorEvent } from '#events/competitor/events.ts';
import type { RecordedEvent } from '#events/envelope.ts';
import { orderingEventTypes } from '#events/ordering/events.ts';
import { auditLine, type AuditedEvent } from '#projections/audit-log/audit-summary.ts';
import { listEffectOf } from '#projections/competitor-list/change-effects.ts';
import type { ProjectionRunner } from '#projections/runner.ts';
import type { ChangeMessage } from './change-message.ts';
import { COMPETITORS_ROOM, type Realtime } from './realtime.server.ts';

/** Changes described for notices; changes listed for the refresh decision. */
const SHOWN = 20;
const TOUCHED = 500;
/** Reorders change what the ranking, board and table show too. */
const orderingTypes = new Set<string>(orderingEventTypes);

export function changeMessage(events: readonly RecordedEvent[]): ChangeMessage | undefined {
  const relevant = events.filter((e) => isCompetitorEvent(e) || orderingTypes.has(e.type)) as AuditedEvent[];
  if (relevant.length === 0) return undefined;
  const changes = relevant.slice(-SHOWN).map((event) => {
    const line = auditLine(event, () => undefined);
    return {
      type: event.type,
      competitorId: line.competitorId,
      competitorName: line.competitorName,
      actorId: event.metadata.actor.id,
      commandId: event.metadata.commandId,
      actorName: event.metadata.actor.name,
      summary: line.summary,
    };
  });
  return {
    position: Math.max(...relevant.map((e) => e.position)),
    changes,
    touched: relevant.slice(-TOUCHED).map((event) => ({
      competitorId: competitorIdOf(event),
      commandId: event.metadata.commandId,
      effect: listEffectOf(event.type),
    })),
    more: Math.max(0, relevant.length - TOUCHED),
  };
}

const competitorIdOf = (event: RecordedEvent): string | null => {
  const data = event.data as { competitorId?: unknown };
  return typeof data.competitorId === 'string' ? data.competitorId : null;
};

/**
 * The reactor: after a competitor-list batch commits (so the change is visible), tell every browser in
 * the room. Projections never broadcast and replays never call reactors, so a rebuild stays silent.
 */
export function startChangeFeed(runner: ProjectionRunner, realtime: Realtime): () => void {
  return runner.onCommitted((projection, events) => {
    if (projection !== 'competitor-list') return;
    const message = changeMessage(events);
    if (message) realtime.broadcast(COMPETITORS_ROOM, 'change', message);
  });
}
