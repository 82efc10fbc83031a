import { randomUUID } from 'node:crypto';
import type { CommandBus } from '#events/bus/command-bus.ts';
import type { ResultChannel } from '#events/bus/result-channel.ts';
import type { Command, CommandEnvelope, Outcome } from '#events/command.ts';
import type { Actor } from '#events/envelope.ts';
import type { EventStore } from '#events/store/event-store.ts';

export interface DispatchOptions {
  commandId?: string;
  correlationId?: string;
  /** How long to wait for the worker's answer (default 5 s). */
  timeoutMs?: number;
}

export interface Dispatched {
  commandId: string;
  /** Undefined when no answer came in time: the command is queued and will still be handled. */
  outcome: Outcome | undefined;
}

/**
 * The web side of the bus: wraps a command in an envelope, sends it, and waits for its outcome on this
 * instance's results channel. If the answer is missed or late, the outcome stored with the events is
 * the fallback, so a lost pub/sub message never turns a saved change into an error.
 */
export class CommandGateway {
  private readonly waiting = new Map<string, (outcome: Outcome) => void>();

  constructor(
    private readonly bus: CommandBus,
    private readonly results: ResultChannel,
    private readonly store: EventStore,
    private readonly clock: () => Date = () => new Date(),
  ) {
    results.subscribe((commandId, outcome) => this.waiting.get(commandId)?.(outcome));
  }

  async dispatch(command: Command, actor: Actor, options: DispatchOptions = {}): Promise<Dispatched> {
    const commandId = options.commandId ?? randomUUID();
    const envelope: CommandEnvelope = {
      commandId,
      correlationId: options.correlationId ?? commandId,
      actor,
      at: this.clock().toISOString(),
      replyTo: this.results.address,
      command,
    };
    const answered = new Promise<Outcome>((resolve) => this.waiting.set(commandId, resolve));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), options.timeoutMs ?? 5_000);
    });
    try {
      await this.bus.send(envelope);
      const outcome = (await Promise.race([answered, timedOut])) ?? (await this.store.findOutcome(commandId));
      return { commandId, outcome };
    } finally {
      clearTimeout(timer);
      this.waiting.delete(commandId);
    }
  }
}
