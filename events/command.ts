import { z } from 'zod';
import {
  AddCompetitor,
  DeleteCompetitor,
  UpdateCompetitor,
  UpdateCompetitorNote,
} from './competitor/commands.ts';
import { actorSchema } from './envelope.ts';
import { ReorderRanking, ReorganizeSegments } from './ordering/commands.ts';
import { AddSegment } from './segment/commands.ts';
import {
  AddUser,
  ChangeOwnPassword,
  ChangeUserRole,
  DisableUser,
  EnableUser,
  ResetPassword,
} from './user/commands.ts';

export const commandSchema = z.discriminatedUnion('type', [
  AddCompetitor,
  UpdateCompetitor,
  UpdateCompetitorNote,
  DeleteCompetitor,
  AddSegment,
  AddUser,
  ChangeUserRole,
  DisableUser,
  EnableUser,
  ResetPassword,
  ChangeOwnPassword,
  ReorderRanking,
  ReorganizeSegments,
]);
export type Command = z.infer<typeof commandSchema>;
export type CommandType = Command['type'];

/**
 * A time exactly as `Date#toISOString` writes it (every writer of an envelope does): the events and the
 * projections store it as a timestamp, so anything else (another format, 30 February) would be
 * accepted on the bus and then refused by the database, or stop a projection, after the change was
 * stored.
 */
export function isInstant(value: string): boolean {
  // Years 1 to 9999: Postgres reads neither year 0 nor the six-digit '+010000-…' form.
  if (value.length !== 24 || value.startsWith('0000')) return false;
  const time = Date.parse(value);
  return !Number.isNaN(time) && new Date(time).toISOString() === value;
}

/** A command as it travels on the bus: the command plus who, when, and where to answer. */
export const commandEnvelopeSchema = z.object({
  commandId: z.string().min(1).max(100),
  correlationId: z.string().min(1).max(100),
  actor: actorSchema,
  /** ISO 8601 time the command was issued; `decide` reads time only from here. */
  at: z.string().refine(isInstant, 'Not a time as Date#toISOString writes it.'),
  /** The results channel of the instance waiting for the outcome, if any. */
  replyTo: z.string().optional(),
  command: commandSchema,
});
export type CommandEnvelope = z.infer<typeof commandEnvelopeSchema>;

/** What a command came to. Rejections carry a message a person can read. */
export type Outcome =
  | { status: 'accepted'; positions: number[]; transactionId: string; streamVersion: number }
  | {
      status: 'rejected';
      code: 'validation' | 'conflict' | 'not_found' | 'forbidden' | 'failed';
      message: string;
      fields?: Record<string, string>;
      details?: Record<string, unknown>;
    };
