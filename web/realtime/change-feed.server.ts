import { isCompetitorEvent } from '#events/competitor/events.ts';
import type { Checkpoint, RecordedEvent } from '#events/envelope.ts';
import type { Queryable } from '#infra/db/database.ts';
import type { Logger } from '#infra/logger.ts';
import { orderingEventTypes } from '#events/ordering/events.ts';
import { auditLine, namesSegments, type AuditedEvent } from '#projections/audit-log/audit-summary.ts';
import { listEffectOf } from '#projections/competitor-list/change-effects.ts';
import { competitorNames } from '#projections/competitor-list/competitor-names.queries.ts';
import type { ProjectionRunner } from '#projections/runner.ts';
import { listSegments } from '#projections/segment-board/segment-board.queries.ts';
import type { ChangeMessage } from './change-message.ts';
import { markOf } from './live-mark.ts';
import { COMPETITORS_ROOM, type Realtime } from './realtime.server.ts';

/** Changes described for notices; changes listed for the refresh decision. */
const SHOWN = 20;
const TOUCHED = 500;
/** Reorders change what the ranking, board and table show too. */
const orderingTypes = new Set<string>(orderingEventTypes);

const relevantOf = (events: readonly RecordedEvent[]) =>
  events.filter((e) => isCompetitorEvent(e) || orderingTypes.has(e.type)) as AuditedEvent[];

/**
 * `names`: competitors' names for the changes whose events do not carry one (a note edit), so the notice
 * says whose note it was; `segments`: segments' names, so a move says "to Enterprise", not its id.
 */
export function changeMessage(
  events: readonly RecordedEvent[],
  checkpoint: Checkpoint,
  names: ReadonlyMap<string, string> = new Map(),
  segments: ReadonlyMap<string, string> = new Map(),
): ChangeMessage | undefined {
  const relevant = relevantOf(events);
  if (relevant.length === 0) return undefined;
  const changes = relevant.slice(-SHOWN).map((event) => {
    const line = auditLine(
      event,
      () => undefined,
      (id) => segments.get(id),
    );
    return {
      type: event.type,
      competitorId: line.competitorId,
      competitorName: line.competitorName ?? names.get(line.competitorId ?? '') ?? null,
      actorId: event.metadata.actor.id,
      commandId: event.metadata.commandId,
      actorName: event.metadata.actor.name,
      summary: line.summary,
    };
  });
  return {
    mark: markOf(checkpoint),
    position: checkpoint.position,
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

/** The competitors of the described changes whose events name none. */
function unnamed(events: readonly RecordedEvent[]): string[] {
  const ids = relevantOf(events)
    .slice(-SHOWN)
    .map((event) => auditLine(event, () => undefined))
    .filter((line) => line.competitorName === null && line.competitorId !== null)
    .map((line) => line.competitorId as string);
  return [...new Set(ids)];
}

/**
 * The reactor: after a competitor-list batch commits (so the change is visible), tell every browser in
 * the room. Projections never broadcast and replays never call reactors, so a rebuild stays silent.
 * Names missing from the events are read from the list first; messages still go out in commit order.
 */
export function startChangeFeed(
  runner: ProjectionRunner,
  realtime: Realtime,
  deps: { db: Queryable; log: Logger },
): () => void {
  let sending = Promise.resolve();
  return runner.onCommitted((projection, events, checkpoint) => {
    if (projection !== 'competitor-list') return;
    sending = sending.then(async () => {
      const names = await competitorNames(deps.db, unnamed(events)).catch((error: unknown) => {
        // The notice then names no competitor; the change itself is still announced.
        deps.log.warn({ err: error }, 'could not read competitor names for a live notice');
        return new Map<string, string>();
      });
      const segments = !events.some((e) => namesSegments(e.type))
        ? []
        : await listSegments(deps.db).catch((error: unknown) => {
            // The notice then names segments by id; the change itself is still announced.
            deps.log.warn({ err: error }, 'could not read segment names for a live notice');
            return [];
          });
      const message = changeMessage(events, checkpoint, names, new Map(segments.map((s) => [s.id, s.name])));
      if (message) realtime.broadcast(COMPETITORS_ROOM, 'change', message);
    });
  });
}
