import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Logger } from '#infra/logger.ts';
import { sampledWarning } from '#infra/sampled-warning.ts';
import type { Outcome } from '../command.ts';

export type ResultHandler = (commandId: string, outcome: Outcome) => void;

/**
 * Carries a command's outcome from the worker back to the instance that sent it. Each instance listens
 * on its own `address`; envelopes carry it as `replyTo`. Delivery is best effort: a requester that
 * misses its answer reads the outcome from the event store instead.
 */
export interface ResultChannel {
  readonly address: string;
  publish(replyTo: string, commandId: string, outcome: Outcome): Promise<void>;
  subscribe(handler: ResultHandler): () => void;
  close(): Promise<void>;
}

export class MemoryResultChannel implements ResultChannel {
  readonly address = 'local';
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  async publish(_replyTo: string, commandId: string, outcome: Outcome): Promise<void> {
    this.emitter.emit('result', commandId, outcome);
  }

  subscribe(handler: ResultHandler): () => void {
    this.emitter.on('result', handler);
    return () => this.emitter.off('result', handler);
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}

/** A result message, as the workers publish it. Unknown keys are kept: a newer worker may add some. */
const resultMessageSchema = z.object({
  commandId: z.string(),
  outcome: z.discriminatedUnion('status', [
    z.looseObject({
      status: z.literal('accepted'),
      positions: z.array(z.number()),
      transactionId: z.string(),
      streamVersion: z.number(),
    }),
    z.looseObject({
      status: z.literal('rejected'),
      code: z.enum(['validation', 'conflict', 'not_found', 'forbidden', 'failed']),
      message: z.string(),
      fields: z.record(z.string(), z.string()).optional(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  ]),
}) satisfies z.ZodType<{ commandId: string; outcome: Outcome }>;

/** At most one warning per this long about messages that are not outcomes. */
const WARN_EVERY_MS = 60_000;

export class RedisResultChannel implements ResultChannel {
  readonly address: string;
  private readonly handlers = new Set<ResultHandler>();
  private readonly ready: Promise<unknown>;

  /**
   * @param publisher any connection
   * @param subscriber a connection of its own, left in subscriber mode
   */
  constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis,
    private readonly prefix: string,
    instanceId: string,
    log?: Logger,
  ) {
    this.address = `${prefix}results:${instanceId}`;
    // Anything that reaches Redis can publish here (the address is in every command on the bus): a message
    // that was not JSON, or not an outcome, threw in the Redis client's data handler and ended the process.
    // It is dropped; the requester reads the outcome from the event store as when an answer is lost.
    const ignore = sampledWarning(
      (report) => log?.warn(report, 'command results: ignored a message that is not an outcome'),
      WARN_EVERY_MS,
    );
    this.subscriber.on('message', (_channel: string, message: string) => {
      let parsed: z.infer<typeof resultMessageSchema> | undefined;
      try {
        parsed = resultMessageSchema.safeParse(JSON.parse(message)).data;
      } catch {
        parsed = undefined;
      }
      if (!parsed) return ignore();
      for (const handler of this.handlers) handler(parsed.commandId, parsed.outcome);
    });
    this.ready = this.subscriber.subscribe(this.address);
  }

  async publish(replyTo: string, commandId: string, outcome: Outcome): Promise<void> {
    if (!replyTo.startsWith(`${this.prefix}results:`)) return;
    await this.publisher.publish(replyTo, JSON.stringify({ commandId, outcome }));
  }

  subscribe(handler: ResultHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  /** Resolves once the subscription is active. */
  whenReady(): Promise<unknown> {
    return this.ready;
  }

  async close(): Promise<void> {
    this.handlers.clear();
    this.subscriber.disconnect();
  }
}
