import { randomUUID } from 'node:crypto';
import type { CommandBus } from '#events/bus/command-bus.ts';
import type { ResultChannel } from '#events/bus/result-channel.ts';
import type { Command, CommandEnvelope, Outcome } from '#events/command.ts';
import type { Actor } from '#events/envelope.ts';
import type { CommandInbox, EarlierAdmission } from '#events/store/command-inbox.ts';
import type { EventLogWriter } from '#events/store/event-log-writer.ts';
import { isDatabaseUnavailable, pgErrorCode, unavailableReason } from '#infra/db/database.ts';
import type { WriteReport } from '#infra/db/write-report.ts';
import { ServiceUnavailableError, ValidationError } from '#infra/errors.ts';
import type { Logger } from '#infra/logger.ts';

export interface DispatchOptions {
  /** The client's idempotency key: a retry with the same key gets the first outcome, never a second event. */
  commandId?: string;
  correlationId?: string;
  /** What the request said (web/idempotency.server.ts): the same key with a different request is refused. */
  requestDigest?: string;
  /** How long to wait for the worker's answer (default 5 s). */
  timeoutMs?: number;
}

export interface Dispatched {
  commandId: string;
  /** Undefined when no answer came in time: the command is stored and will still be handled. */
  outcome: Outcome | undefined;
}

const IN_FLIGHT_POLL_MS = 200;

export const keyOfAnotherUser: Outcome = {
  status: 'rejected',
  code: 'conflict',
  message: 'This request key belongs to another request. Reload the page and try again.',
};

export const keyOfADifferentRequest: Outcome = {
  status: 'rejected',
  code: 'conflict',
  message:
    'This request key was already used for a different change, so this one was not saved. Reload the page and try again.',
};

/**
 * Postgres refusing the bytes of a command (22P05: a NUL in JSON, 22P02: a broken character, 22021: not
 * in the encoding). Every field is validated before this point, so this is a backstop: the caller hears
 * what is wrong instead of "something went wrong", and nothing was stored (the admission is one statement).
 */
const refusedBytes = (error: unknown) => ['22P05', '22P02', '22021'].includes(pgErrorCode(error) ?? '');

/**
 * The web side of the bus. A command is first admitted to the inbox in Postgres — only then is it
 * "accepted" — and then sent on the bus as a wake-up; the outcome comes back on this instance's results
 * channel, or is read from the store when the answer is missed or late. If Postgres cannot take the
 * command, nothing happened and the caller hears 503; if the bus cannot, the command is safe anyway
 * (workers re-send what stays in the inbox).
 */
export class CommandGateway {
  /**
   * Who waits for each command's outcome on this instance. A set: the same key sent twice at once (a
   * double click, two tabs) is two callers of one command, and the answer must reach the one that admitted
   * it, not only the one that registered last (it would wait out its whole budget).
   */
  private readonly waiting = new Map<string, Set<(outcome: Outcome) => void>>();
  private busDown = false;

  constructor(
    private readonly deps: {
      bus: CommandBus;
      results: ResultChannel;
      store: EventLogWriter;
      inbox: CommandInbox;
      log: Logger;
      clock?: () => Date;
      /** Told how each admission's write went (see readiness: "database (writes)"). */
      onWrite?: WriteReport;
      /**
       * Rejects while the database's files are missing (`Database.checkStorage`; default: not checked).
       * Asked before an outcome read back from the store is believed: a command admitted just before its
       * data folder was deleted may have been "stored" into the deleted files (the worker checks too).
       */
      checkStorage?: () => Promise<void>;
    },
  ) {
    deps.results.subscribe((commandId, outcome) => {
      for (const resolve of this.waiting.get(commandId) ?? []) resolve(outcome);
    });
  }

  async dispatch(command: Command, actor: Actor, options: DispatchOptions = {}): Promise<Dispatched> {
    const commandId = options.commandId ?? randomUUID();
    const envelope: CommandEnvelope = {
      commandId,
      correlationId: options.correlationId ?? commandId,
      actor,
      at: (this.deps.clock ?? (() => new Date()))().toISOString(),
      replyTo: this.deps.results.address,
      command,
    };
    const { answered, release } = this.awaitResult(commandId);
    try {
      const admission = await this.admit(envelope, options.requestDigest);
      if (admission.kind !== 'admitted') return this.earlier(commandId, admission, options.timeoutMs);
      await this.send(envelope);
      return { commandId, outcome: await this.outcome(commandId, answered, options.timeoutMs) };
    } finally {
      release();
    }
  }

  /**
   * The outcome of a key sent before, admitting nothing: undefined when it never was. A request that
   * finds nothing left to do asks this first: as the retry of one that did it, it gets that one's answer.
   */
  async recall(
    commandId: string,
    actor: Actor,
    options: Pick<DispatchOptions, 'requestDigest' | 'timeoutMs'> = {},
  ): Promise<Dispatched | undefined> {
    let admission;
    try {
      admission = await this.deps.inbox.recall(commandId, actor.id, options.requestDigest);
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      throw new ServiceUnavailableError(
        `Your change could not be checked because ${unavailableReason(error)}. Please try again in a moment.`,
      );
    }
    return admission && this.earlier(commandId, admission, options.timeoutMs);
  }

  /**
   * Whether this actor sent this very request (key and digest) before and it was admitted: handled, or
   * still being handled. Sending it again then changes nothing and gets the first answer, so it is not
   * refused for a permission the actor lost since (their own first sending may be what took it).
   */
  async sentBefore(commandId: string, actor: Actor, requestDigest: string): Promise<boolean> {
    const admission = await this.deps.inbox.recall(commandId, actor.id, requestDigest);
    return admission?.kind === 'handled' || admission?.kind === 'in-flight';
  }

  /** The answer for a key admitted before: its outcome, or a refusal of the key. */
  private async earlier(
    commandId: string,
    admission: EarlierAdmission,
    timeoutMs: number | undefined,
  ): Promise<Dispatched> {
    switch (admission.kind) {
      case 'handled':
        return { commandId, outcome: admission.outcome };
      case 'foreign':
        return { commandId, outcome: keyOfAnotherUser };
      case 'different':
        return { commandId, outcome: keyOfADifferentRequest };
      case 'in-flight':
        // A retry of a command still being handled: its answer goes to whoever sent it first.
        return { commandId, outcome: await this.poll(commandId, timeoutMs) };
    }
  }

  /** This command's outcome as the results channel brings it; `release` when no longer waiting. */
  private awaitResult(commandId: string): { answered: Promise<Outcome>; release: () => void } {
    const waiters = this.waiting.get(commandId) ?? new Set<(outcome: Outcome) => void>();
    this.waiting.set(commandId, waiters);
    const mine: Array<(outcome: Outcome) => void> = [];
    const answered = new Promise<Outcome>((resolve) => {
      mine.push(resolve);
      waiters.add(resolve);
    });
    const release = () => {
      for (const resolve of mine) waiters.delete(resolve);
      if (waiters.size === 0 && this.waiting.get(commandId) === waiters) this.waiting.delete(commandId);
    };
    return { answered, release };
  }

  private async admit(envelope: CommandEnvelope, requestDigest: string | undefined) {
    try {
      const admission = await this.deps.inbox.admit(envelope, requestDigest);
      this.deps.onWrite?.();
      return admission;
    } catch (error) {
      this.deps.onWrite?.(error);
      if (refusedBytes(error))
        throw new ValidationError(
          'The change contains characters that cannot be stored (such as NUL or half of a character). Nothing was saved; remove them and try again.',
        );
      // Only an unreachable or full database is "try again"; anything else is a bug to see as one.
      if (!isDatabaseUnavailable(error)) throw error;
      this.deps.log.warn({ err: error, commandId: envelope.commandId }, 'could not admit a command');
      throw new ServiceUnavailableError(
        `Your change could not be accepted because ${unavailableReason(error)}. Nothing was saved; please try again in a moment.`,
      );
    }
  }

  private async send(envelope: CommandEnvelope): Promise<void> {
    try {
      await this.deps.bus.send(envelope);
      if (this.busDown) this.deps.log.info('command bus reachable again');
      this.busDown = false;
    } catch (error) {
      // Durable already: a worker re-sends it from the inbox. Logged once per outage.
      if (!this.busDown)
        this.deps.log.warn({ err: error }, 'command bus unreachable; commands wait in the inbox');
      this.busDown = true;
    }
  }

  private async outcome(
    commandId: string,
    answered: Promise<Outcome>,
    timeoutMs = 5_000,
  ): Promise<Outcome | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), timeoutMs);
    });
    try {
      return (await Promise.race([answered, timedOut])) ?? (await this.stored(commandId));
    } finally {
      clearTimeout(timer);
    }
  }

  private async poll(commandId: string, timeoutMs = 5_000): Promise<Outcome | undefined> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const outcome = await this.stored(commandId);
      if (outcome || Date.now() >= until) return outcome;
      await new Promise((resolve) => setTimeout(resolve, IN_FLIGHT_POLL_MS));
    }
  }

  /**
   * The recorded outcome; undefined when none yet or the store cannot be read (the command is safe).
   * Throws StorageMissingError (503, nothing was saved) when the files it would be read from are gone.
   */
  private async stored(commandId: string): Promise<Outcome | undefined> {
    await this.deps.checkStorage?.();
    return this.deps.store.findOutcome(commandId).catch(() => undefined);
  }
}
