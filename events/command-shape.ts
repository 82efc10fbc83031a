import { z } from 'zod';
import {
  commandEnvelopeSchema,
  commandSchema,
  isInstant,
  type CommandEnvelope,
  type CommandType,
} from './command.ts';

/**
 * The cheap check of a bus entry at the boundary. Parsing the whole envelope with zod costs about as much
 * as the rest of the worker's drain loop (uuid and text refinements, transforms), so the bus checks only
 * the envelope's shape here, and the command itself is parsed in full with `commandSchema` where it is
 * decided (`parseCommand`). zod stays the source: the command types are read from the zod union, and a
 * property test holds `checkEnvelopeShape` equal to `envelopeShapeSchema` below.
 */

/** A command whose type is known but whose payload is not parsed yet. */
export interface UncheckedCommand {
  type: CommandType;
  payload: Record<string, unknown>;
}

/** An envelope as the bus delivers it: every field checked, the command's payload not yet parsed. */
export type BusEnvelope = Omit<CommandEnvelope, 'command'> & { command: UncheckedCommand };

const commandTypeList = commandSchema.options.map((option) => option.shape.type.value);
const commandTypes: ReadonlySet<string> = new Set(commandTypeList);

/** What `checkEnvelopeShape` accepts, stated in zod (the test compares the two). */
export const envelopeShapeSchema = commandEnvelopeSchema.extend({
  command: z.object({ type: z.enum(commandTypeList), payload: z.looseObject({}) }),
});

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isText = (value: unknown, min: number, max: number): value is string =>
  typeof value === 'string' && value.length >= min && value.length <= max;

/**
 * The envelope if `value` has its shape, as a fresh object holding only the envelope's own keys (as zod
 * would strip the others); undefined otherwise.
 */
export function checkEnvelopeShape(value: unknown): BusEnvelope | undefined {
  if (!isRecord(value)) return undefined;
  const { commandId, correlationId, actor, at, replyTo, command } = value;
  if (!isText(commandId, 1, 100) || !isText(correlationId, 1, 100)) return undefined;
  if (typeof at !== 'string' || !isInstant(at)) return undefined;
  if (!isRecord(actor) || !isText(actor.id, 1, Infinity) || !isText(actor.name, 1, Infinity))
    return undefined;
  if (replyTo !== undefined && typeof replyTo !== 'string') return undefined;
  if (!isRecord(command) || typeof command.type !== 'string' || !commandTypes.has(command.type))
    return undefined;
  if (!isRecord(command.payload)) return undefined;
  const who = { id: actor.id, name: actor.name };
  const what = { type: command.type as CommandType, payload: command.payload };
  // Keys in the schema's order, so the envelope serializes as zod's output did.
  return replyTo === undefined
    ? { commandId, correlationId, actor: who, at, command: what }
    : { commandId, correlationId, actor: who, at, replyTo, command: what };
}

/** A bus entry whose command failed the full parse: it goes to the dead letters like any malformed entry. */
export class InvalidCommandError extends Error {
  override name = 'InvalidCommandError';
}

/** The full zod parse of a delivered command (its transforms included), before it is decided. */
export function parseCommand(command: BusEnvelope['command']): CommandEnvelope['command'] {
  const parsed = commandSchema.safeParse(command);
  if (!parsed.success) throw new InvalidCommandError('not a valid command envelope');
  return parsed.data;
}
