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
 * The dead letters themselves are kept in the database (`DeadLetterSink`, given to each bus), not on the
 * bus: Redis runs without persistence, and what an operator still has to act on must survive a restart.
 */
export interface CommandBus {
  send(envelope: BusEnvelope): Promise<string>;
  /** New commands for `consumer`, plus entries other consumers left idle too long. */
  read(consumer: string, options?: ReadOptions): Promise<Delivery[]>;
  ack(ids: readonly string[]): Promise<void>;
  /**
   * Records the delivery with its error in the dead letters (the database: `DeadLetterStore`), then
   * acknowledges it. A failed record leaves it unacknowledged, to be delivered and given up on again.
   */
  deadLetter(delivery: Delivery, error: string): Promise<void>;
  /**
   * A delivered entry whose command failed the full parse: recorded in the dead letters exactly like an
   * entry that failed the shape check at the boundary (its raw text, no envelope, "not a valid command
   * envelope"), and acknowledged.
   */
  deadLetterInvalid(delivery: Delivery): Promise<void>;
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
