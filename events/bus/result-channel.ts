import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
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
  ) {
    this.address = `${prefix}results:${instanceId}`;
    this.subscriber.on('message', (_channel: string, message: string) => {
      const { commandId, outcome } = JSON.parse(message) as { commandId: string; outcome: Outcome };
      for (const handler of this.handlers) handler(commandId, outcome);
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
