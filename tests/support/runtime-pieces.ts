import { randomUUID } from 'node:crypto';
import { eventRegistry } from '#events/all-events.ts';
import type { CommandBus } from '#events/bus/command-bus.ts';
import type { Command, CommandEnvelope } from '#events/command.ts';
import type { Actor } from '#events/envelope.ts';
import type { DeadLetterStore } from '#events/store/dead-letters.ts';
import { createEventStore } from '#events/store/event-store.ts';
import { createLogger } from '#infra/logger.ts';
import { allProjections } from '#projections/all-projections.ts';
import { ProjectionRunner } from '#projections/runner.ts';
import { bootstrapContent } from '#services/bootstrap/bootstrap.ts';
import { createCommandRouter, type CommandRouter } from '#services/command-router.ts';
import type { TestDatabase } from './test-database.ts';

export const silentLog = createLogger('silent');
export const testActor: Actor = { id: 'tester', name: 'Test User' };

export function envelope(command: Command, overrides: Partial<CommandEnvelope> = {}): CommandEnvelope {
  const commandId = overrides.commandId ?? randomUUID();
  return {
    commandId,
    correlationId: commandId,
    actor: testActor,
    at: new Date().toISOString(),
    command,
    ...overrides,
  };
}

/** Store, handler and a (not started) runner over a test database, with the default segments. */
export async function writeSide(db: TestDatabase, options: { segments?: boolean } = {}) {
  const store = createEventStore(db.pool, eventRegistry);
  const routeOnly = createCommandRouter(store);
  // Like the worker, wake the projection runners after appending.
  const route: CommandRouter = async (envelope) => {
    const outcome = await routeOnly(envelope);
    if (outcome.status === 'accepted' && outcome.positions.length > 0) await store.notifyAppended();
    return outcome;
  };
  const runner = new ProjectionRunner({ db, store, projections: allProjections, log: silentLog });
  if (options.segments !== false) await bootstrapContent(store, route, { demoData: false });
  return { store, route, runner };
}

type AddCompetitor = Extract<Command, { type: 'AddCompetitor' }>;

export function addCompetitorCommand(
  name: string,
  overrides: Partial<AddCompetitor['payload']> = {},
): AddCompetitor {
  return {
    type: 'AddCompetitor',
    payload: {
      competitorId: randomUUID(),
      name,
      website: null,
      segmentId: 'smb',
      threat: 'medium',
      headquarters: null,
      ...overrides,
    },
  };
}

/**
 * Puts a command in the dead letters as a worker does after too many failures (through the bus, which
 * records it and acknowledges its entry); the letter's id, as /ops links to it.
 */
export async function giveUp(
  runtime: { bus: CommandBus; deadLetters: DeadLetterStore },
  letter: CommandEnvelope,
  error = 'handler threw: boom',
): Promise<string> {
  await runtime.bus.deadLetter({ id: `${Date.now()}-0`, envelope: letter, deliveryCount: 5 }, error);
  const stored = await runtime.deadLetters.list(10_000);
  const found = stored.find((d) => d.envelope?.commandId === letter.commandId);
  if (!found) throw new Error(`the dead letter of ${letter.commandId} was not stored`);
  return found.id;
}
