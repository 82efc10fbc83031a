import { parseCommand, type BusEnvelope } from '#events/command-shape.ts';
import type { Outcome } from '#events/command.ts';
import type { EventMetadata } from '#events/envelope.ts';
import type { EventStore } from '#events/store/event-store.ts';
import { competitorStream, orderingStream, segmentsStream, usersStream } from '#events/streams.ts';
import { competitorDecider } from './competitor/competitor.ts';
import { addCompetitor, deleteCompetitor, updateCompetitor } from './competitor/handlers.ts';
import { assertNever } from './decider.ts';
import { handleCommand, type WriteModel } from './handle-command.ts';
import { handleReorder } from './ordering/reorder.ts';
import type { StateCache } from './state-cache.ts';
import { segmentsDecider } from './segment/segments.ts';
import { usersDecider } from './user/users.ts';

/** Throws `InvalidCommandError` for a command that fails the full parse (the worker dead-letters it). */
export type CommandHandler = (envelope: BusEnvelope) => Promise<Outcome>;

export const metadataOf = (envelope: BusEnvelope): EventMetadata => ({
  actor: envelope.actor,
  commandId: envelope.commandId,
  correlationId: envelope.correlationId,
  at: envelope.at,
});

/**
 * Routes each command type to its aggregate. A worker passes a `cache` of folded states so long streams
 * are not re-read from the start for every command.
 */
export function createCommandHandler(
  store: EventStore,
  options: { cache?: StateCache } = {},
): CommandHandler {
  const w: WriteModel = { store, cache: options.cache };
  const cached = { cache: options.cache };
  return async (envelope) => {
    const command = parseCommand(envelope.command);
    const metadata = metadataOf(envelope);
    switch (command.type) {
      case 'AddCompetitor':
        return addCompetitor(w, command, metadata);
      case 'UpdateCompetitor':
        return updateCompetitor(w, command, metadata);
      case 'DeleteCompetitor':
        return deleteCompetitor(w, command, metadata);
      case 'UpdateCompetitorNote':
        return handleCommand(
          store,
          competitorStream(command.payload.competitorId),
          competitorDecider,
          command,
          metadata,
          cached,
        );
      case 'AddSegment':
        return handleCommand(store, segmentsStream(), segmentsDecider, command, metadata, cached);
      case 'AddUser':
      case 'ChangeUserRole':
      case 'DisableUser':
      case 'EnableUser':
        return handleCommand(store, usersStream(), usersDecider, command, metadata, cached);
      case 'ReorderRanking':
      case 'ReorganizeSegments':
        return handleReorder(store, command, metadata);
      default:
        return assertNever(command);
    }
  };
}

/**
 * Commands with the same key run one after another in a worker; different keys run side by side. Read
 * from the unparsed command: a malformed id only puts the command in a lane of its own.
 */
export function commandKey(envelope: BusEnvelope): string {
  const { type, payload } = envelope.command;
  switch (type) {
    case 'AddCompetitor':
    case 'UpdateCompetitor':
    case 'DeleteCompetitor':
    case 'UpdateCompetitorNote':
      return competitorStream(String(payload.competitorId));
    case 'AddSegment':
      return segmentsStream();
    case 'AddUser':
    case 'ChangeUserRole':
    case 'DisableUser':
    case 'EnableUser':
      return usersStream();
    case 'ReorderRanking':
    case 'ReorganizeSegments':
      return orderingStream();
    default:
      return assertNever(type);
  }
}
