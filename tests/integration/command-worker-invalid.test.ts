import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryCommandBus } from '#events/bus/memory-command-bus.ts';
import { MemoryResultChannel } from '#events/bus/result-channel.ts';
import { parseCommand, type BusEnvelope } from '#events/command-shape.ts';
import type { Outcome } from '#events/command.ts';
import { createLogger } from '#infra/logger.ts';
import { startCommandWorker } from '#services/command-worker.ts';
import { withDeadLetterDb } from '#tests/support/dead-letter-db.ts';
import { envelope } from '#tests/support/runtime-pieces.ts';

/** A delete command; an id that is not a uuid passes the shape check but not the full parse. */
const deleting = (competitorId: string): BusEnvelope =>
  envelope({ type: 'DeleteCompetitor', payload: { competitorId } });

/** Where the buses here put what they give up on: a real store on an embedded database. */
const deadLetters = withDeadLetterDb();

describe('command worker and the full parse of a command', () => {
  it('dead-letters a command that passed the shape check but not the parse, and handles the rest', async () => {
    const bus = new MemoryCommandBus(deadLetters.store);
    const good = deleting(randomUUID());
    const bad = deleting('not-a-uuid');
    await bus.send(bad);
    await bus.send(good);
    const handled: string[] = [];
    let allDone: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (allDone = resolve));
    const accepted: Outcome = { status: 'accepted', positions: [], transactionId: '0', streamVersion: 0 };
    const worker = startCommandWorker({
      bus,
      results: new MemoryResultChannel(),
      // Like the real handler: the full parse comes first.
      route: async (e) => {
        parseCommand(e.command);
        return accepted;
      },
      log: createLogger('silent'),
      consumer: 'w1',
      blockMs: 20,
      onOutcome: (delivery) => {
        handled.push(delivery.envelope.commandId);
        allDone();
      },
    });
    await done;
    await worker.stop();
    expect(handled).toEqual([good.commandId]);
    expect(await bus.pendingCount()).toBe(0);
    expect(await deadLetters.stored()).toEqual([
      {
        envelope: null,
        raw: JSON.stringify(bad),
        error: 'not a valid command envelope',
        deliveryCount: 1,
      },
    ]);
  });
});
