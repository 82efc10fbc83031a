import type { CommandBus, Delivery } from '#events/bus/command-bus.ts';
import type { ResultChannel } from '#events/bus/result-channel.ts';
import { InvalidCommandError, type BusEnvelope } from '#events/command-shape.ts';
import type { Outcome } from '#events/command.ts';
import { givenUp, type CommandInbox } from '#events/store/command-inbox.ts';
import { isDatabaseUnavailable } from '#infra/db/database.ts';
import { reportingWrite, type WriteReport } from '#infra/db/write-report.ts';
import type { Logger } from '#infra/logger.ts';
import { commandKey, type CommandRouter } from './command-router.ts';

export interface WorkerOptions {
  bus: CommandBus;
  results: ResultChannel;
  route: CommandRouter;
  /** Where accepted commands wait durably; processed ones are settled there after each batch. */
  inbox?: CommandInbox;
  log: Logger;
  /** This worker's name in the consumer group; unique per process. */
  consumer: string;
  /** A command that failed this many deliveries goes to the dead letters (default 5). */
  maxDeliveries?: number;
  /**
   * How long the bus waits before it delivers a failed command again (its claim idle time, default
   * 30 s): the inbox holds the command that long, so the sweeper does not put a second copy on the bus.
   */
  redeliveryMs?: number;
  /** Commands for different aggregates processed side by side (default 16). */
  concurrency?: number;
  /** Entries read per batch (default 100). */
  batchSize?: number;
  blockMs?: number;
  /** Trim acknowledged entries from the bus about this often (default 10 s). */
  trimEveryMs?: number;
  onOutcome?: (delivery: Delivery, outcome: Outcome) => void;
  /**
   * Told how each command's write went (see readiness: "database (writes)"), and the inbox's settling:
   * stored, or the error it met (an outage, a full disk: the command waits).
   */
  onWrite?: WriteReport;
  /** Told whether the last read of the bus worked. */
  onBus?: (reachable: boolean, error?: unknown) => void;
  /** Called once after a batch that appended events (to wake projection runners). */
  onAppended?: () => Promise<void>;
  /**
   * Rejects while the database's files are missing (`Database.checkStorage`; default: not checked).
   * Asked after each command's write, before it is answered or settled: PGlite takes a write into the
   * deleted files it still holds open, so a command admitted just before its data folder was deleted
   * and handled after would be answered "saved". Such a command waits as in an outage instead.
   */
  checkStorage?: () => Promise<void>;
}

export interface Worker {
  stop(): Promise<void>;
}

/**
 * Consumes the command bus: reads a batch, routes each command (one aggregate's commands in order, different
 * aggregates concurrently), answers each requester, then acknowledges the batch in one call. A command
 * that throws is left unacknowledged and comes back through the claim of idle entries; after
 * `maxDeliveries` it goes to the dead letters and its requester is told.
 */
export function startCommandWorker(options: WorkerOptions): Worker {
  const { bus, results, log, consumer, checkStorage } = options;
  /** The command decided and stored, and (embedded) its write known to be in files that still exist. */
  const route = checkStorage
    ? async (envelope: BusEnvelope) => {
        const outcome = await options.route(envelope);
        await checkStorage();
        return outcome;
      }
    : options.route;
  const maxDeliveries = options.maxDeliveries ?? 5;
  const concurrency = options.concurrency ?? 16;
  let running = true;
  let lastTrim = Date.now();

  let appended = false;
  /** Command ids processed (or given up on) in the current batch: settled in the inbox before the ack. */
  let settled: string[] = [];
  /**
   * Answers to requesters sent in the current batch. Not awaited in the lane: the lane goes on to its
   * next command while the answer travels; the batch's finish waits for them before the ack.
   */
  let replies: Promise<void>[] = [];

  /**
   * Routes one command again after its first attempt threw. While the database is unreachable (or its disk
   * full) it waits and tries again rather than count the outage against the command (which would send good commands to the
   * dead letters); any other error is thrown.
   */
  async function routeThroughOutages(delivery: Delivery, firstError: unknown): Promise<Outcome> {
    let waitMs = 200;
    let error = firstError;
    for (;;) {
      if (!running || !isDatabaseUnavailable(error)) throw error;
      options.onWrite?.(error);
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      waitMs = Math.min(waitMs * 2, 2_000);
      try {
        return await route(delivery.envelope);
      } catch (next) {
        error = next;
      }
    }
  }

  /** A command was decided (events appended or a rejection stored): recorded for the batch and answered. */
  function settle(delivery: Delivery, outcome: Outcome): void {
    const { envelope } = delivery;
    options.onWrite?.();
    if (outcome.status === 'accepted' && outcome.positions.length > 0) appended = true;
    settled.push(envelope.commandId);
    options.onOutcome?.(delivery, outcome);
    if (envelope.replyTo) {
      replies.push(
        results.publish(envelope.replyTo, envelope.commandId, outcome).catch((error: unknown) => {
          log.warn({ err: error, commandId: envelope.commandId }, 'could not publish a command outcome');
        }),
      );
    }
  }

  /**
   * The slow path of a command whose route (or settling) threw: the outage wait and its outcome, or the
   * failure dealt with (dead-lettered, or left unacknowledged to come back). True when it was settled.
   */
  async function recover(delivery: Delivery, error: unknown): Promise<boolean> {
    try {
      settle(delivery, await routeThroughOutages(delivery, error));
      return true;
    } catch (failure) {
      await fail(delivery, failure);
      return false;
    }
  }

  async function fail(delivery: Delivery, error: unknown): Promise<void> {
    const { envelope } = delivery;
    if (error instanceof InvalidCommandError) {
      // Passed the bus's shape check but not the full parse: dead-lettered as the bus does a malformed
      // entry (never retried, nobody answered: the gateway only sends commands that parse), and settled
      // in the inbox by that record, so the sweeper does not send it again and again.
      await bus
        .deadLetterInvalid(delivery)
        .catch((deadLetterError: unknown) =>
          log.warn({ err: deadLetterError }, 'could not record a dead letter; it comes back'),
        );
      return;
    }
    const message = error instanceof Error ? error.message : String(error);
    log.error(
      {
        err: error,
        commandId: envelope.commandId,
        type: envelope.command.type,
        delivery: delivery.deliveryCount,
      },
      'command failed',
    );
    if (delivery.deliveryCount < maxDeliveries) {
      // Left unacknowledged: the bus delivers it again once it has been idle its claim idle time, at its
      // next claim (the Redis bus claims every quarter of that time), seen by a read that may block for
      // up to blockMs first. Not re-sent by the sweeper meanwhile.
      const redelivery = options.redeliveryMs ?? 30_000;
      await options.inbox
        ?.hold(envelope.commandId, redelivery + redelivery / 4 + (options.blockMs ?? 2_000))
        .catch((holdError: unknown) =>
          log.warn({ err: holdError, commandId: envelope.commandId }, 'could not hold a failed command'),
        );
    } else {
      try {
        await bus.deadLetter(delivery, message);
      } catch (deadLetterError) {
        // Not recorded, so not acknowledged: it comes back, and is given up on again then.
        log.warn({ err: deadLetterError, commandId: envelope.commandId }, 'could not record a dead letter');
        return;
      }
      // Given up on: the dead letter's record settled it in the inbox (an operator's Retry reopens it).
      if (envelope.replyTo)
        await results.publish(envelope.replyTo, envelope.commandId, givenUp).catch(() => {});
    }
  }

  /**
   * Runs the batch's lanes, at most `concurrency` at a time; returns the ids to acknowledge. Each command
   * costs one await on its route (the hot path; failures take `recover`), as this runs for every command.
   */
  async function runLanes(deliveries: Delivery[]): Promise<string[]> {
    const lanes = new Map<string, Delivery[]>();
    for (const delivery of deliveries) {
      const key = commandKey(delivery.envelope);
      const lane = lanes.get(key);
      if (lane) lane.push(delivery);
      else lanes.set(key, [delivery]);
    }
    const queue = [...lanes.values()];
    let next = 0;
    const acked: string[] = [];
    const runLane = async () => {
      for (let lane = queue[next++]; lane; lane = queue[next++]) {
        for (const delivery of lane) {
          try {
            settle(delivery, await route(delivery.envelope));
            acked.push(delivery.id);
          } catch (error) {
            if (await recover(delivery, error)) acked.push(delivery.id);
          }
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, runLane));
    return acked;
  }

  const read = () => bus.read(consumer, { count: options.batchSize ?? 100, blockMs: options.blockMs });

  /** The previous batch's wake-up, settle and ack, still under way while the next batch is processed. */
  let finishing: Promise<void> = Promise.resolve();

  async function finishBatch(
    acked: string[],
    processed: string[],
    wake: boolean,
    answers: Promise<void>[],
  ): Promise<void> {
    // Neither failure undoes what was processed: runners also poll, and an unsettled command is only
    // re-sent and answered from its recorded outcome. The wake-up does not wait for the answers.
    await Promise.all([
      ...answers,
      wake
        ? options
            .onAppended?.()
            .catch((error: unknown) => log.warn({ err: error }, 'could not wake projections'))
        : undefined,
    ]);
    // Settled before the ack: a crash in between only means a redelivery, which is idempotent.
    if (options.inbox)
      await reportingWrite(options.onWrite, options.inbox.settle(processed)).catch((error: unknown) =>
        log.warn({ err: error }, 'could not settle processed commands in the inbox'),
      );
    await bus.ack(acked);
  }

  /**
   * Processes a batch, then leaves its wake-up, settle and ack running while the loop goes on to the
   * next one: everything acknowledged is already committed, so the ack need not hold up the next batch (a
   * crash before it only means a redelivery). One finish runs at a time; its failure surfaces here.
   */
  async function processBatch(deliveries: Delivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    appended = false;
    settled = [];
    replies = [];
    const acked = await runLanes(deliveries);
    const processed = settled;
    const wake = appended;
    await finishing;
    finishing = finishBatch(acked, processed, wake, replies);
    finishing.catch(() => undefined);
  }

  const loop = (async () => {
    let backoffMs = 200;
    let failing = false;
    // The next batch is read while this one is processed, so the bus round trip is not on the critical
    // path. Batches are still processed one after another, so one aggregate's commands stay in order.
    let next: Promise<Delivery[]> | undefined;
    while (running) {
      try {
        const deliveries = await (next ?? read());
        next = running ? read() : undefined;
        // A failed prefetch is seen (and retried) by the next turn of the loop.
        next?.catch(() => undefined);
        if (failing) log.info('command worker reaches the bus again');
        failing = false;
        options.onBus?.(true);
        await processBatch(deliveries);
        if (Date.now() - lastTrim > (options.trimEveryMs ?? 10_000)) {
          lastTrim = Date.now();
          await bus.trim();
        }
        backoffMs = 200;
      } catch (error) {
        next = undefined;
        finishing = Promise.resolve();
        if (!running) break;
        options.onBus?.(false, error);
        // Once per outage, not once per attempt.
        if (!failing) log.warn({ err: error }, 'command worker cannot use the bus; retrying with back-off');
        failing = true;
        await new Promise((resolve) => setTimeout(resolve, backoffMs));
        backoffMs = Math.min(backoffMs * 2, 5_000);
      }
    }
    // Process what was already read for us rather than leave it to be claimed after the idle time.
    const last = await next?.catch(() => []);
    if (last)
      await processBatch(last).catch((error: unknown) =>
        log.warn({ err: error }, 'could not finish the last batch'),
      );
    await finishing.catch((error: unknown) => log.warn({ err: error }, 'could not finish the last batch'));
  })();

  return {
    async stop() {
      running = false;
      await loop;
    },
  };
}
