import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryCommandBus } from '#events/bus/memory-command-bus.ts';
import { MemoryResultChannel } from '#events/bus/result-channel.ts';
import type { BusEnvelope } from '#events/command-shape.ts';
import type { Outcome } from '#events/command.ts';
import type { CommandInbox } from '#events/store/command-inbox.ts';
import { createLogger } from '#infra/logger.ts';
import { startCommandWorker, type WorkerOptions } from '#services/command-worker.ts';
import { withDeadLetterDb } from '#tests/support/dead-letter-db.ts';
import { envelope } from '#tests/support/runtime-pieces.ts';

const silent = createLogger('silent');
const accepted: Outcome = { status: 'accepted', positions: [], transactionId: '0', streamVersion: 0 };

const note = (competitorId: string, value: string): BusEnvelope =>
  envelope(
    { type: 'UpdateCompetitorNote', payload: { competitorId, column: 'general', value } },
    { replyTo: 'local' },
  );

/** Resolves once `count` answers reached the requester; the answers by command id. */
function answers(results: MemoryResultChannel, count: number): Promise<Map<string, Outcome>> {
  const got = new Map<string, Outcome>();
  return new Promise((resolve) => {
    results.subscribe((commandId, outcome) => {
      got.set(commandId, outcome);
      if (got.size === count) resolve(got);
    });
  });
}

function worker(options: Partial<WorkerOptions> & Pick<WorkerOptions, 'bus' | 'results' | 'route'>) {
  return startCommandWorker({ log: silent, consumer: 'w1', blockMs: 20, ...options });
}

/** Steps of the event loop, so lanes interleave the way real (database) routes do. */
const turns = (n: number) =>
  new Promise<void>((resolve) => setImmediate(() => (n > 0 ? resolve(turns(n - 1)) : resolve())));

/** Where the buses here put what they give up on: a real store on an embedded database. */
const deadLetters = withDeadLetterDb();

describe('command worker', () => {
  it('keeps each aggregate in send order, answers every command, settles the batch before acknowledging it', async () => {
    const bus = new MemoryCommandBus(deadLetters.store);
    const results = new MemoryResultChannel();
    const competitors = [randomUUID(), randomUUID(), randomUUID()];
    const sent = Array.from({ length: 30 }, (_, i) => note(competitors[i % 3]!, `v${i}`));
    for (const envelope of sent) await bus.send(envelope);
    const log: string[] = [];
    const ack = bus.ack.bind(bus);
    bus.ack = async (ids) => {
      log.push(`ack ${ids.length}`);
      await ack(ids);
    };
    const inbox = {
      settle: async (ids: readonly string[]) => void log.push(`settle ${ids.length}`),
    } as unknown as CommandInbox;
    const routed: BusEnvelope[] = [];
    const done = answers(results, sent.length);
    const w = worker({
      bus,
      results,
      inbox,
      // Later commands finish sooner: without lanes, one aggregate's commands would finish out of order.
      route: async (envelope) => {
        await turns(30 - Number(String(envelope.command.payload.value).slice(1)));
        routed.push(envelope);
        return accepted;
      },
    });
    const got = await done;
    await w.stop();

    expect([...got.keys()].sort()).toEqual(sent.map((e) => e.commandId).sort());
    for (const competitorId of competitors) {
      const of = (list: BusEnvelope[]) =>
        list.filter((e) => e.command.payload.competitorId === competitorId).map((e) => e.commandId);
      expect(of(routed)).toEqual(of(sent));
    }
    expect(await bus.pendingCount()).toBe(0);
    expect(log).toEqual(['settle 30', 'ack 30']);
  });

  const outages = [
    ['a database outage', () => new Error('connect ECONNREFUSED 127.0.0.1:5432')],
    // What Postgres and PGlite answer when the data folder's disk is full (found on a full tmpfs).
    [
      'a full disk',
      () =>
        Object.assign(new Error('could not extend file "base/5/16405": No space left on device'), {
          code: '53100',
        }),
    ],
    // What PGlite answers once its data folder was removed under it, for a file it had not opened yet.
    [
      'a removed data folder',
      () =>
        Object.assign(new Error('could not open file "base/5/16894": No such file or directory'), {
          code: '58P01',
        }),
    ],
  ] as const;

  it.each(outages)('waits out %s instead of counting it against the command', async (_, outage) => {
    const bus = new MemoryCommandBus(deadLetters.store);
    const results = new MemoryResultChannel();
    const envelope = note(randomUUID(), 'v');
    await bus.send(envelope);
    let attempts = 0;
    const database: boolean[] = [];
    const done = answers(results, 1);
    const w = worker({
      bus,
      results,
      // One delivery only: had the outage counted as a failure, the command would be a dead letter.
      maxDeliveries: 1,
      onWrite: (error) => database.push(error === undefined),
      route: async () => {
        attempts++;
        if (attempts <= 2) throw outage();
        return accepted;
      },
    });
    expect((await done).get(envelope.commandId)).toEqual(accepted);
    await w.stop();
    expect(attempts).toBe(3);
    expect(database).toEqual([false, false, true]);
    expect(await deadLetters.stored()).toEqual([]);
    expect(await bus.pendingCount()).toBe(0);
  });

  it('leaves a failing command for redelivery, then dead-letters it after maxDeliveries and tells its requester', async () => {
    const bus = new MemoryCommandBus(deadLetters.store, { claimIdleMs: 300 });
    const results = new MemoryResultChannel();
    const failing = note(randomUUID(), 'bad');
    const fine = note(randomUUID(), 'good');
    await bus.send(failing);
    await bus.send(fine);
    const settled: string[] = [];
    const inbox = {
      settle: async (ids: readonly string[]) => void settled.push(...ids),
    } as unknown as CommandInbox;
    let failures = 0;
    const done = answers(results, 2);
    const w = worker({
      bus,
      results,
      inbox,
      maxDeliveries: 2,
      route: async (envelope) => {
        if (envelope.commandId !== failing.commandId) return accepted;
        failures++;
        throw new Error('boom');
      },
    });
    const got = await done;
    await w.stop();
    expect(got.get(fine.commandId)).toEqual(accepted);
    expect(got.get(failing.commandId)).toMatchObject({ status: 'rejected', code: 'failed' });
    expect(failures).toBe(2);
    expect(await deadLetters.stored()).toEqual([{ envelope: failing, error: 'boom', deliveryCount: 2 }]);
    // The failing one is settled in the inbox by its dead letter's record (dead-letters.contract).
    expect(settled).toEqual([fine.commandId]);
    expect(await bus.pendingCount()).toBe(0);
  });
});
