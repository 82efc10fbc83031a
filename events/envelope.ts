import { z } from 'zod';

/** Who did something. The name is copied into events so history reads well after a rename. */
export const actorSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
});
export type Actor = z.infer<typeof actorSchema>;

/** The system itself, for seeding, first-run set-up and operator commands. */
export const systemActor: Actor = { id: 'system', name: 'Rivals' };

export const eventMetadataSchema = z.object({
  actor: actorSchema,
  commandId: z.string(),
  correlationId: z.string(),
  /** When the command was issued (ISO 8601). */
  at: z.string(),
});
export type EventMetadata = z.infer<typeof eventMetadataSchema>;

/** An event as decided, before it is stored. */
export interface NewEvent<T extends string = string, D = unknown> {
  type: T;
  data: D;
}

/** Where a projection (or any reader) has got to in the commit-ordered log. */
export interface Checkpoint {
  /** xid8 of the writing transaction, as a decimal string. */
  transactionId: string;
  position: number;
}

export const startOfLog: Checkpoint = { transactionId: '0', position: 0 };

/** Where and when an event was stored. */
export interface RecordedMeta extends Checkpoint {
  stream: string;
  streamVersion: number;
  schemaVersion: number;
  metadata: EventMetadata;
  recordedAt: Date;
}

export interface RecordedEvent<T extends string = string, D = unknown> extends NewEvent<T, D>, RecordedMeta {}

/** A union of decided events, each as stored: keeps the type ↔ data correlation for `switch`. */
export type Recorded<E extends NewEvent> = E extends NewEvent ? E & RecordedMeta : never;

/**
 * When the event's command was accepted (ms since the epoch): the time every page shows for a change,
 * and the clock a past state ("as of", `replay --to-time`) is read on (docs/decisions/0020).
 */
export const acceptedAt = (event: RecordedMeta): number => Date.parse(event.metadata.at);

/** Total order of the commit-safe log: by transaction, then position. */
export function compareCheckpoints(a: Checkpoint, b: Checkpoint): number {
  const ta = BigInt(a.transactionId);
  const tb = BigInt(b.transactionId);
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.position - b.position;
}
