import { parseCommand, type BusEnvelope } from '#events/command-shape.ts';
import type { Command, CommandType, Outcome } from '#events/command.ts';
import type { Action } from '#events/user/permissions.ts';
import type { EventMetadata, NewEvent } from '#events/envelope.ts';
import type { EventStore } from '#events/store/event-store.ts';
import { competitorStream, orderingStream, segmentsStream, usersStream } from '#events/streams.ts';
import { competitorDecider } from './competitor/competitor.ts';
import {
  addCompetitor,
  deleteCompetitor,
  hasBegun,
  updateCompetitor,
} from './competitor/competitor-commands.ts';
import { decideAndAppend, loadState, type WriteModel } from './decide-and-append.ts';
import type { Decider } from './decider.ts';
import { decideAndAppendReorder } from './ordering/reorder.ts';
import type { StateCache } from './state-cache.ts';
import { segmentsDecider } from './segment/segments.ts';
import { actorMayDecide, usersDecider } from './user/users.ts';

/**
 * Sends a command to its decider and stores the outcome (events appended, or the rejection). The command
 * is parsed in full first (the bus checked only the envelope's shape): one that fails throws
 * `InvalidCommandError`, which the worker dead-letters.
 */
export type CommandRouter = (envelope: BusEnvelope) => Promise<Outcome>;

type CommandByType = { [C in Command as C['type']]: C };
type CommandOf<T extends CommandType> = CommandByType[T];

/** Where one command type goes: the stream it is decided on, and how it is decided and stored. */
interface Route<T extends CommandType> {
  stream(command: CommandOf<T>): string;
  /**
   * The command's lane in a worker: commands on the same stream must get the same lane, and run one after
   * another. Different streams may share a lane (that only serializes them). Usually the stream's name.
   */
  lane(command: CommandOf<T>): string;
  run(w: WriteModel, command: CommandOf<T>, metadata: EventMetadata): Promise<Outcome>;
  /** The action it is (events/user/permissions.ts): its sender must still be allowed it when it is decided. */
  needs: Action;
}

/** A command decided by one decider on one stream. */
const onStream = <T extends CommandType, E extends NewEvent, S>(
  stream: (command: CommandOf<T>) => string,
  decider: Decider<CommandOf<T>, E, S>,
  needs: Action,
  lane: (command: CommandOf<T>) => string = stream,
): Route<T> => ({
  stream,
  lane,
  needs,
  run: (w, command, metadata) => decideAndAppend(w, stream(command), decider, command, metadata),
});

type OnCompetitor = { payload: { competitorId: string } };
const ofCompetitor = (command: OnCompetitor) => competitorStream(command.payload.competitorId);
/**
 * A competitor's commands share the lane of its id: the stream is named after it, and the id as read
 * hashes cheaper than the built name (the worker looks a lane up for every command it reads).
 */
const competitorLane = (command: OnCompetitor) => command.payload.competitorId;
const onCompetitor = { stream: ofCompetitor, lane: competitorLane };

const reorder: Omit<Route<'ReorderRanking' | 'ReorganizeSegments'>, 'needs'> = {
  stream: orderingStream,
  lane: orderingStream,
  run: (w, command, metadata) => decideAndAppendReorder(w.store, command, metadata),
};

/**
 * Every command type, once: a type missing here fails the typecheck. Both the router and the worker's
 * lanes (`commandKey`) read it, so a command's stream is named in one place.
 */
const commandTable: { [T in CommandType]: Route<T> } = {
  AddCompetitor: { ...onCompetitor, run: addCompetitor, needs: 'competitors.create' },
  UpdateCompetitor: { ...onCompetitor, run: updateCompetitor, needs: 'competitors.edit' },
  DeleteCompetitor: { ...onCompetitor, run: deleteCompetitor, needs: 'competitors.delete' },
  UpdateCompetitorNote: {
    ...onCompetitor,
    run: (w, command, metadata) =>
      decideAndAppend(
        w,
        ofCompetitor(command),
        competitorDecider,
        { ...command, senderId: metadata.actor.id },
        metadata,
      ),
    needs: 'notes.edit',
  },
  AddSegment: onStream(segmentsStream, segmentsDecider, 'segments.manage'),
  AddUser: onStream(usersStream, usersDecider, 'users.manage'),
  ChangeUserRole: onStream(usersStream, usersDecider, 'users.manage'),
  DisableUser: onStream(usersStream, usersDecider, 'users.manage'),
  EnableUser: onStream(usersStream, usersDecider, 'users.manage'),
  ResetPassword: onStream(usersStream, usersDecider, 'users.manage'),
  ChangeOwnPassword: {
    stream: usersStream,
    lane: usersStream,
    run: (w, command, metadata) =>
      decideAndAppend(w, usersStream(), usersDecider, { ...command, senderId: metadata.actor.id }, metadata),
    needs: 'account.manage',
  },
  ReorderRanking: { ...reorder, needs: 'ranking.reorder' },
  ReorganizeSegments: { ...reorder, needs: 'segments.reorder' },
};

/** A command's route; `T` ties the route to this very command, so its `run` takes it without a cast. */
const routeOf = <T extends CommandType>(command: CommandOf<T>): Route<T> => commandTable[command.type as T];

const metadataOf = (envelope: Omit<BusEnvelope, 'command'>): EventMetadata => ({
  actor: envelope.actor,
  commandId: envelope.commandId,
  correlationId: envelope.correlationId,
  at: envelope.at,
});

/**
 * Routes each command to its decider through the command table. A worker passes a `cache` of folded
 * states so long streams are not re-read from the start for every command.
 */
export function createCommandRouter(store: EventStore, options: { cache?: StateCache } = {}): CommandRouter {
  const w: WriteModel = { store, cache: options.cache };
  return async ({ command: unchecked, ...envelope }) => {
    const command = parseCommand(unchecked);
    const route = routeOf(command);
    const metadata = metadataOf(envelope);
    // The sender's account as it is now, not as it was when the request came in (a rejection is
    // recorded like any other, so a redelivery answers the same).
    const { state: users } = await loadState(w.store, usersStream(), usersDecider, w.cache);
    const refused = actorMayDecide(users, envelope.actor.id, route.needs);
    // Redelivered after a crash midway (its claim or decision stored): finish it, do not strand a name.
    if (refused && !(await hasBegun(w, metadata.commandId)))
      return w.store.recordOutcome(metadata.commandId, route.stream(command), refused);
    return route.run(w, command, metadata);
  };
}

/**
 * Commands with the same key run one after another in a worker; different keys run side by side. Read
 * from the command before its full parse (its type is checked; the lane functions only read the payload),
 * so a malformed id only puts the command in a lane of its own (or shares one: that only serializes).
 */
export const commandKey = ({ command }: BusEnvelope): string => {
  const typed = command as Command;
  return String(routeOf(typed).lane(typed));
};
