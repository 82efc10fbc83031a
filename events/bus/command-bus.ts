import type { BusEnvelope } from '../command-shape.ts';

/**
 * One delivery of a command to a consumer. `deliveryCount` is 1 the first time. The envelope's shape is
 * checked; its command is parsed in full where it is decided (see `parseCommand`).
 */
export interface Delivery {
  id: string;
  envelope: BusEnvelope;
  deliveryCount: number;
}

export interface DeadLetter {
  id: string;
  /** Null when the entry was not a valid envelope at all; `raw` then holds what was on the bus. */
  envelope: BusEnvelope | null;
  raw?: string;
  error: string;
  deliveryCount: number;
}

/** Retry of a dead letter that holds no valid command. */
export class NotRetryableError extends Error {
  override name = 'NotRetryableError';
}

export interface ReadOptions {
  /** At most this many deliveries (default 100). */
  count?: number;
  /** Wait up to this long for new commands when none are ready (default 2000 ms). */
  blockMs?: number;
}

/**
 * At-least-once delivery of commands to a group of workers. Every command is delivered until a
 * consumer acknowledges it; one left unacknowledged longer than `claimIdleMs` is handed to another read
 * (the crashed-consumer case), and the consumer moves it to the dead letters after too many attempts.
 */
export interface CommandBus {
  send(envelope: BusEnvelope): Promise<string>;
  /** New commands for `consumer`, plus entries other consumers left idle too long. */
  read(consumer: string, options?: ReadOptions): Promise<Delivery[]>;
  ack(ids: readonly string[]): Promise<void>;
  /** Records the delivery with its error in the dead letters and acknowledges it. */
  deadLetter(delivery: Delivery, error: string): Promise<void>;
  /**
   * A delivered entry whose command failed the full parse: recorded in the dead letters exactly like an
   * entry that failed the shape check at the boundary (its raw text, no envelope, "not a valid command
   * envelope"), and acknowledged.
   */
  deadLetterInvalid(delivery: Delivery): Promise<void>;
  deadLetters(limit?: number): Promise<DeadLetter[]>;
  /** How many dead letters there are (`deadLetters` lists only the newest). */
  deadLetterCount(): Promise<number>;
  /** The dead letter with this id, if it is still there. */
  findDeadLetter(id: string): Promise<DeadLetter | undefined>;
  /**
   * Takes the dead letter out and sends its command to the workers again, atomically, so two operators
   * clicking Retry at once re-deliver it once. Undefined when it is no longer there; throws for an
   * entry that is not a valid command (it can only be discarded).
   */
  retryDeadLetter(id: string): Promise<DeadLetter | undefined>;
  /** Takes the dead letter out for good; undefined when it was already gone. */
  discardDeadLetter(id: string): Promise<DeadLetter | undefined>;
  /** How many deliveries are awaiting acknowledgement. */
  pendingCount(): Promise<number>;
  /** Drops acknowledged entries; never drops a pending or undelivered one. */
  trim(): Promise<void>;
  close(): Promise<void>;
}

export interface BusOptions {
  /** An entry idle this long in another consumer's hands is claimed by the next read (default 30 s). */
  claimIdleMs?: number;
  /** A consumer silent this long and holding nothing is removed from the group (default 1 h). */
  consumerIdleMs?: number;
}
