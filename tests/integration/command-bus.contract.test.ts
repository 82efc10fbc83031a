import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BusOptions, CommandBus, Delivery } from '#events/bus/command-bus.ts';
import { MemoryCommandBus } from '#events/bus/memory-command-bus.ts';
import { RedisCommandBus } from '#events/bus/redis-command-bus.ts';
import type { BusEnvelope } from '#events/command-shape.ts';
import { commandEnvelopeSchema, type CommandEnvelope } from '#events/command.ts';
import { createLogger } from '#infra/logger.ts';
import { createRedisClient, type Redis } from '#infra/redis.ts';
import { backendUrl, runs } from '#tests/support/environment.ts';
import { deleteKeys } from '#tests/support/redis-keys.ts';
import { withDeadLetterDb } from '#tests/support/dead-letter-db.ts';

/**
 * One contract, every CommandBus: the embedded bus always, the Redis Streams bus unless RIVALS_TEST_SKIP
 * names redis (without TEST_REDIS_URL the file fails at once, saying so). Buses use a short claimIdleMs so the
 * crashed-consumer path runs in a fraction of a second. What a bus gives up on goes to the dead letters in
 * a database (an embedded one here; the store has its own contract, dead-letters.contract.test.ts).
 */

const silent = createLogger('silent');
const testRedisUrl = runs('redis') ? backendUrl('redis') : undefined;
const CLAIM_IDLE_MS = 300;
/** Long enough past claimIdleMs for an unacknowledged entry to be claimable. */
const PAST_CLAIM_IDLE_MS = CLAIM_IDLE_MS + 100;
const BLOCK_MS = 100;

/** The buses of one test, all over the same store: one bus per worker process. */
interface BusHarness {
  /** Another worker's view of the store: a new bus with connections of its own (the same bus in memory). */
  connect(): Promise<CommandBus>;
  teardown(): Promise<void>;
}

interface Implementation {
  name: string;
  open(options: BusOptions): BusHarness;
}

const deadLetters = withDeadLetterDb();
const stored = () => deadLetters.stored();

const memoryImplementation: Implementation = {
  name: 'memory',
  open(options) {
    const bus = new MemoryCommandBus(deadLetters.store, options);
    return { connect: async () => bus, teardown: () => bus.close() };
  },
};

// --- Redis plumbing -------------------------------------------------------------------------------------

let admin: Redis | undefined;

/** A third connection for inspecting and sabotaging Redis; never one a bus uses. */
function adminClient(): Redis {
  if (!admin) throw new Error('the admin Redis client is not connected');
  return admin;
}

beforeAll(() => {
  if (testRedisUrl) admin = createRedisClient(testRedisUrl, silent, { name: `test-admin-${randomUUID()}` });
});

afterAll(async () => {
  await admin?.quit();
  admin = undefined;
});

async function closeClient(client: Redis): Promise<void> {
  if (client.status === 'end') return;
  if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
  else client.disconnect();
}

interface RedisConnection {
  bus: RedisCommandBus;
  /** The CLIENT SETNAME of the bus's blocking connection. */
  blockingName: string;
}

interface RedisHarness extends BusHarness {
  prefix: string;
  connectRedis(): Promise<RedisConnection>;
}

function openRedis(url: string, options: BusOptions): RedisHarness {
  const prefix = `rivals-test:${randomUUID()}:`;
  const buses: RedisCommandBus[] = [];
  const clients: Redis[] = [];
  const connectRedis = async (): Promise<RedisConnection> => {
    const tag = randomUUID().slice(0, 8);
    const commands = createRedisClient(url, silent, { name: `test-commands-${tag}` });
    const blocking = createRedisClient(url, silent, { name: `test-blocking-${tag}`, blockMs: 2_000 });
    clients.push(commands, blocking);
    const bus = new RedisCommandBus(commands, blocking, prefix, deadLetters.store, options);
    buses.push(bus);
    // As the runtime does before starting a worker.
    await bus.ensureGroup();
    return { bus, blockingName: `rivals:test-blocking-${tag}` };
  };
  return {
    prefix,
    connectRedis,
    connect: async () => (await connectRedis()).bus,
    async teardown() {
      for (const bus of buses) await bus.close();
      for (const client of clients) await closeClient(client);
      await deleteKeys(adminClient(), prefix);
    },
  };
}

const implementations: Implementation[] = [memoryImplementation];
if (testRedisUrl) {
  const url = testRedisUrl;
  implementations.push({ name: 'redis', open: (options) => openRedis(url, options) });
}

// --- Helpers --------------------------------------------------------------------------------------------

function makeEnvelope(overrides: Partial<CommandEnvelope> = {}): CommandEnvelope {
  const commandId = randomUUID();
  return commandEnvelopeSchema.parse({
    commandId,
    correlationId: commandId,
    actor: { id: 'u1', name: 'Test' },
    at: new Date().toISOString(),
    command: { type: 'DeleteCompetitor', payload: { competitorId: randomUUID() } },
    ...overrides,
  });
}

async function sendAll(bus: CommandBus, envelopes: readonly CommandEnvelope[]): Promise<string[]> {
  const ids: string[] = [];
  // In order, so ids follow the envelopes.
  for (const envelope of envelopes) ids.push(await bus.send(envelope));
  return ids;
}

/** Handles the outcome at once, so a read that fails while the test is busy is no unhandled rejection. */
const settle = <T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> =>
  promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );

const envelopes = (n: number) => Array.from({ length: n }, () => makeEnvelope());
const idsOf = (deliveries: readonly Delivery[]) => deliveries.map((d) => d.id);
const sorted = (values: Iterable<string>) => [...values].sort();

/** Reads until `done` says so or `timeoutMs` passes; returns everything delivered. */
async function readUntil(
  bus: CommandBus,
  consumer: string,
  done: (all: readonly Delivery[]) => boolean,
  timeoutMs = 3_000,
): Promise<Delivery[]> {
  const all: Delivery[] = [];
  const deadline = Date.now() + timeoutMs;
  while (!done(all) && Date.now() < deadline) {
    all.push(...(await bus.read(consumer, { blockMs: BLOCK_MS })));
  }
  return all;
}

/** One command sent and delivered to a consumer that then "crashes" (never acknowledges it). */
async function deliveredToCrashedConsumer(harness: BusHarness) {
  const crashed = await harness.connect();
  const survivor = await harness.connect();
  const envelope = makeEnvelope();
  const id = await crashed.send(envelope);
  expect(await crashed.read('crashed', { blockMs: BLOCK_MS })).toEqual([{ id, envelope, deliveryCount: 1 }]);
  return { crashed, survivor, envelope, id };
}

// --- The contract ---------------------------------------------------------------------------------------

for (const implementation of implementations) {
  describe(`CommandBus contract: ${implementation.name}`, () => {
    let harness: BusHarness | undefined;

    const open = (options: BusOptions = { claimIdleMs: CLAIM_IDLE_MS }): BusHarness => {
      harness = implementation.open(options);
      return harness;
    };

    afterEach(async () => {
      await harness?.teardown();
      harness = undefined;
    });

    describe('send and read', () => {
      it('delivers the envelope intact, with deliveryCount 1', async () => {
        const bus = await open().connect();
        const envelope = makeEnvelope({ replyTo: 'rivals:results:instance-1' });
        const id = await bus.send(envelope);
        expect(id).toEqual(expect.any(String));
        expect(id).not.toBe('');

        const deliveries = await bus.read('c1', { blockMs: BLOCK_MS });
        expect(deliveries).toEqual([{ id, envelope, deliveryCount: 1 }]);
        // A consumer never shares objects with the sender.
        expect(deliveries[0]?.envelope).not.toBe(envelope);
        expect(await bus.pendingCount()).toBe(1);
      });

      it('returns [] when nothing arrives within blockMs, and the next read still gets what is sent', async () => {
        // That a read really blocks (rather than returning [] at once) is the next test: it has to be woken.
        const bus = await open().connect();
        expect(await bus.read('c1', { blockMs: BLOCK_MS })).toEqual([]);
        const envelope = makeEnvelope();
        const id = await bus.send(envelope);
        expect(await bus.read('c1', { blockMs: BLOCK_MS })).toEqual([{ id, envelope, deliveryCount: 1 }]);
      });

      it('wakes a blocked read when a command is sent', async () => {
        const harness = open();
        const reader = await harness.connect();
        const sender = await harness.connect();
        // The read starts before the command exists, so it can only deliver it by being woken; one that
        // did not block, or was never woken, answers [] instead.
        const reading = reader.read('c1', { blockMs: 5_000 });
        await sleep(50);
        const envelope = makeEnvelope();
        const id = await sender.send(envelope);
        expect(await reading).toEqual([{ id, envelope, deliveryCount: 1 }]);
      });

      it('respects COUNT and delivers in send order', async () => {
        const bus = await open().connect();
        const ids = await sendAll(bus, envelopes(10));

        const first = await bus.read('c1', { count: 3, blockMs: BLOCK_MS });
        expect(idsOf(first)).toEqual(ids.slice(0, 3));

        const rest = await bus.read('c2', { count: 100, blockMs: BLOCK_MS });
        expect(idsOf(rest)).toEqual(ids.slice(3));
        expect(await bus.pendingCount()).toBe(10);
      });
    });

    describe('acknowledgement and redelivery', () => {
      it('does not redeliver acknowledged entries, and redelivers the unacknowledged one', async () => {
        const harness = open();
        const bus = await harness.connect();
        const other = await harness.connect();
        const sent = envelopes(3);
        const ids = await sendAll(bus, sent);

        const deliveries = await bus.read('c1', { blockMs: BLOCK_MS });
        expect(idsOf(deliveries)).toEqual(ids);
        expect(await bus.pendingCount()).toBe(3);

        await bus.ack([ids[0]!, ids[2]!]);
        await bus.ack([]);
        expect(await bus.pendingCount()).toBe(1);

        await sleep(PAST_CLAIM_IDLE_MS);
        const redelivered = await other.read('c2', { blockMs: BLOCK_MS });
        expect(redelivered).toEqual([{ id: ids[1], envelope: sent[1], deliveryCount: 2 }]);
        expect(await bus.pendingCount()).toBe(1);

        await other.ack([ids[1]!]);
        expect(await bus.pendingCount()).toBe(0);
        await sleep(PAST_CLAIM_IDLE_MS);
        expect(await other.read('c3', { blockMs: BLOCK_MS })).toEqual([]);
      });

      it('keeps an unacknowledged entry with its consumer until claimIdleMs has passed', async () => {
        // A claimIdleMs no test run reaches, so "not yet" does not depend on how fast this machine is.
        const { crashed, survivor } = await deliveredToCrashedConsumer(open({ claimIdleMs: 600_000 }));
        expect(await survivor.read('survivor', { blockMs: BLOCK_MS })).toEqual([]);
        expect(await crashed.pendingCount()).toBe(1);
      });

      it('hands an unacknowledged entry to another consumer after claimIdleMs', async () => {
        const { crashed, survivor, id, envelope } = await deliveredToCrashedConsumer(open());
        await sleep(PAST_CLAIM_IDLE_MS);
        expect(await survivor.read('survivor', { blockMs: BLOCK_MS })).toEqual([
          { id, envelope, deliveryCount: 2 },
        ]);
        // Claiming resets the idle clock: a third consumer has to wait again, and then sees delivery 3.
        expect(await crashed.read('third', { blockMs: 0 })).toEqual([]);
        await sleep(PAST_CLAIM_IDLE_MS);
        expect(await crashed.read('third', { blockMs: BLOCK_MS })).toEqual([
          { id, envelope, deliveryCount: 3 },
        ]);
        expect(await crashed.pendingCount()).toBe(1);
      });

      it('delivers every command at least once to concurrent consumers and drains the pending list', async () => {
        const total = 500;
        const harness = open();
        const sender = await harness.connect();
        const consumers = await Promise.all(
          ['w1', 'w2', 'w3'].map(async (name) => ({ name, bus: await harness.connect() })),
        );
        const sent = new Map(envelopes(total).map((e) => [e.commandId, e]));
        const seen = new Set<string>();
        const received: Delivery[] = [];
        let stop = false;

        const loops = consumers.map(async ({ name, bus }) => {
          let reads = 0;
          while (!stop) {
            const deliveries = await bus.read(name, { count: 25, blockMs: BLOCK_MS });
            reads++;
            for (const delivery of deliveries) {
              received.push(delivery);
              seen.add(delivery.envelope.commandId);
            }
            await bus.ack(idsOf(deliveries));
          }
          return reads;
        });

        try {
          const batch = [...sent.values()];
          for (let i = 0; i < batch.length; i += 50) {
            await Promise.all(batch.slice(i, i + 50).map((envelope) => sender.send(envelope)));
          }
          const deadline = Date.now() + 10_000;
          while (seen.size < total && Date.now() < deadline) await sleep(20);
        } finally {
          stop = true;
        }
        const reads = await Promise.all(loops);

        expect(reads.every((n) => n > 0)).toBe(true);
        expect(sorted(seen)).toEqual(sorted(sent.keys()));
        for (const delivery of received) {
          expect(delivery.envelope).toEqual(sent.get(delivery.envelope.commandId));
        }
        expect(received.length).toBeGreaterThanOrEqual(total);
        expect(await sender.pendingCount()).toBe(0);
        // Nothing left to claim either.
        await sleep(PAST_CLAIM_IDLE_MS);
        expect(await sender.read('late', { blockMs: BLOCK_MS })).toEqual([]);
      });
    });

    describe('dead letters', () => {
      it('records envelope, error and deliveryCount in the dead letters, and acknowledges the entry', async () => {
        const harness = open();
        const bus = await harness.connect();
        const other = await harness.connect();
        const sent = envelopes(2);
        const ids = await sendAll(bus, sent);

        const [first, second] = await bus.read('c1', { blockMs: BLOCK_MS });
        expect(first?.id).toBe(ids[0]);
        await bus.deadLetter(first!, 'boom: handler threw');
        expect(await bus.pendingCount()).toBe(1);
        expect(await stored()).toEqual([
          { envelope: sent[0], error: 'boom: handler threw', deliveryCount: 1 },
        ]);

        // The dead-lettered entry is acknowledged: only the other one comes back, on its second delivery.
        await sleep(PAST_CLAIM_IDLE_MS);
        const redelivered = await other.read('c2', { blockMs: BLOCK_MS });
        expect(redelivered).toEqual([{ id: second?.id, envelope: sent[1], deliveryCount: 2 }]);
        await other.deadLetter(redelivered[0]!, 'still failing');
        expect(await bus.pendingCount()).toBe(0);
        expect(await stored()).toEqual([
          { envelope: sent[0], error: 'boom: handler threw', deliveryCount: 1 },
          { envelope: sent[1], error: 'still failing', deliveryCount: 2 },
        ]);

        await sleep(PAST_CLAIM_IDLE_MS);
        expect(await bus.read('c3', { blockMs: BLOCK_MS })).toEqual([]);
      });

      it('leaves the entry unacknowledged when the dead letters cannot be written', async () => {
        const harness = open();
        const bus = await harness.connect();
        const [sent] = envelopes(1);
        await bus.send(sent!);
        const [delivery] = await bus.read('c1', { blockMs: BLOCK_MS });
        const letters = deadLetters.store;
        const add = letters.add.bind(letters);
        letters.add = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
        try {
          await expect(bus.deadLetter(delivery!, 'boom')).rejects.toThrow('ECONNREFUSED');
        } finally {
          letters.add = add;
        }
        // Still pending: it comes back, and is given up on again once the database answers.
        expect(await bus.pendingCount()).toBe(1);
        await sleep(PAST_CLAIM_IDLE_MS);
        const [again] = await bus.read('c2', { blockMs: BLOCK_MS });
        expect(again).toEqual({ id: delivery!.id, envelope: sent, deliveryCount: 2 });
        await bus.deadLetter(again!, 'boom');
        expect(await stored()).toEqual([{ envelope: sent, error: 'boom', deliveryCount: 2 }]);
        expect(await bus.pendingCount()).toBe(0);
      });

      it('records a command that failed the full parse like a malformed entry: raw text, no envelope', async () => {
        const harness = open();
        const bus = await harness.connect();
        // Passes the shape check at the boundary; only the command's own parse refuses the payload.
        const shapeOnly: BusEnvelope = {
          ...makeEnvelope(),
          command: { type: 'DeleteCompetitor', payload: { competitorId: 'not-a-uuid' } },
        };
        const id = await bus.send(shapeOnly);
        const [delivery] = await bus.read('c1', { blockMs: BLOCK_MS });
        expect(delivery).toEqual({ id, envelope: shapeOnly, deliveryCount: 1 });
        await bus.deadLetterInvalid(delivery!);
        expect(await bus.pendingCount()).toBe(0);
        expect(await stored()).toEqual([
          {
            envelope: null,
            raw: JSON.stringify(shapeOnly),
            error: 'not a valid command envelope',
            deliveryCount: 1,
          },
        ]);
        const [letter] = await deadLetters.store.list();
        await expect(deadLetters.store.retry(letter!.id)).rejects.toThrow('not a valid command');
        await sleep(PAST_CLAIM_IDLE_MS);
        expect(await bus.read('c2', { blockMs: BLOCK_MS })).toEqual([]);
      });
    });

    describe('trim', () => {
      it('never drops pending or undelivered entries', async () => {
        const harness = open();
        const bus = await harness.connect();
        const other = await harness.connect();
        const sent = envelopes(10);
        const ids = await sendAll(bus, sent);
        const expected = (i: number, deliveryCount: number) => ({
          id: ids[i],
          envelope: sent[i],
          deliveryCount,
        });

        expect(idsOf(await bus.read('c1', { count: 6, blockMs: BLOCK_MS }))).toEqual(ids.slice(0, 6));
        // Acknowledged: 0, 1, 2 and 4. Pending: 3 and 5. Undelivered: 6 to 9.
        await bus.ack([ids[0]!, ids[1]!, ids[2]!, ids[4]!]);
        await bus.trim();
        await other.trim();
        expect(await bus.pendingCount()).toBe(2);

        expect(await other.read('c2', { blockMs: BLOCK_MS })).toEqual(
          [6, 7, 8, 9].map((i) => expected(i, 1)),
        );
        await other.ack(ids.slice(6));
        await bus.trim();

        await sleep(PAST_CLAIM_IDLE_MS);
        expect(await other.read('c3', { blockMs: BLOCK_MS })).toEqual([expected(3, 2), expected(5, 2)]);
        await other.ack([ids[3]!, ids[5]!]);
        expect(await bus.pendingCount()).toBe(0);
      });

      it('keeps undelivered entries when nothing is pending', async () => {
        const bus = await open().connect();
        await bus.trim(); // an empty bus is fine too
        const sent = envelopes(5);
        const ids = await sendAll(bus, sent);

        const first = await bus.read('c1', { count: 2, blockMs: BLOCK_MS });
        expect(idsOf(first)).toEqual(ids.slice(0, 2));
        await bus.ack(idsOf(first));
        await bus.trim();

        const rest = await bus.read('c1', { blockMs: BLOCK_MS });
        expect(rest).toEqual([2, 3, 4].map((i) => ({ id: ids[i], envelope: sent[i], deliveryCount: 1 })));
        await bus.ack(idsOf(rest));
        await bus.trim();

        // Trimming everything acknowledged leaves a bus that still takes new commands.
        const envelope = makeEnvelope();
        const id = await bus.send(envelope);
        expect(await bus.read('c1', { blockMs: BLOCK_MS })).toEqual([{ id, envelope, deliveryCount: 1 }]);
      });
    });
  });
}

// --- Redis only -----------------------------------------------------------------------------------------

if (testRedisUrl) {
  const url = testRedisUrl;

  describe('RedisCommandBus', () => {
    let harness: RedisHarness | undefined;

    const open = (options: BusOptions = { claimIdleMs: CLAIM_IDLE_MS }): RedisHarness => {
      harness = openRedis(url, options);
      return harness;
    };

    afterEach(async () => {
      await harness?.teardown();
      harness = undefined;
    });

    it('recreates its group when Redis loses the stream (NOGROUP) under a running consumer', async () => {
      const harness = open();
      const worker = await harness.connect();
      const sender = await harness.connect();
      const before = makeEnvelope();
      await sender.send(before);

      const received: BusEnvelope[] = [];
      const errors: unknown[] = [];
      let stop = false;
      const loop = (async () => {
        while (!stop) {
          try {
            const deliveries = await worker.read('w1', { blockMs: 1_000 });
            received.push(...deliveries.map((d) => d.envelope));
            await worker.ack(idsOf(deliveries));
          } catch (error) {
            errors.push(error);
            await sleep(50);
          }
        }
      })();

      let after: CommandEnvelope;
      try {
        const deadline = Date.now() + 3_000;
        while (received.length < 1 && Date.now() < deadline) await sleep(10);
        expect(received).toEqual([before]);

        // The loop is now blocked in XREADGROUP; Redis restarts without persistence.
        await sleep(100);
        expect(await adminClient().del(`${harness.prefix}commands`)).toBe(1);
        await sleep(100);

        after = makeEnvelope();
        await sender.send(after);
        const until = Date.now() + 3_000;
        while (received.length < 2 && Date.now() < until) await sleep(10);
      } finally {
        stop = true;
        await loop;
      }

      expect(errors).toEqual([]);
      expect(received).toEqual([before, after]);
      const groups = (await adminClient().xinfo('GROUPS', `${harness.prefix}commands`)) as unknown[][];
      expect(groups.map((g) => g[1])).toEqual(['workers']);
    });

    it('answers [] once for a read interrupted by the loss of the stream, then works', async () => {
      const harness = open();
      const bus = await harness.connect();
      const reading = settle(bus.read('w1', { blockMs: 2_000 }));
      await sleep(100);
      expect(await adminClient().del(`${harness.prefix}commands`)).toBe(1);
      expect(await reading).toEqual({ value: [] });

      const envelope = makeEnvelope();
      const id = await bus.send(envelope);
      expect(await bus.read('w1', { blockMs: BLOCK_MS })).toEqual([{ id, envelope, deliveryCount: 1 }]);
    });

    it('after losing the stream: nothing pending, nothing to trim, one empty read, then delivery', async () => {
      const harness = open();
      const bus = await harness.connect();
      const stream = `${harness.prefix}commands`;
      await bus.send(makeEnvelope());
      expect(await bus.read('w1', { blockMs: BLOCK_MS })).toHaveLength(1);
      expect(await bus.pendingCount()).toBe(1);

      expect(await adminClient().del(stream)).toBe(1);
      expect(await bus.pendingCount()).toBe(0);
      await bus.trim();

      // XADD recreates the stream but not the group: the next read hits NOGROUP and recreates it.
      const envelope = makeEnvelope();
      const id = await bus.send(envelope);
      expect(await bus.read('w1', { blockMs: BLOCK_MS })).toEqual([]);
      expect(await bus.read('w1', { blockMs: BLOCK_MS })).toEqual([{ id, envelope, deliveryCount: 1 }]);
    });

    it('moves a malformed stream entry to the dead letters instead of throwing', async () => {
      const harness = open();
      const bus = await harness.connect();
      const stream = `${harness.prefix}commands`;
      await adminClient().xadd(stream, '*', 'envelope', 'not json');
      await adminClient().xadd(stream, '*', 'envelope', JSON.stringify({ commandId: '' }));
      await adminClient().xadd(stream, '*', 'something', 'else');
      const envelope = makeEnvelope();
      const id = await bus.send(envelope);

      expect(await bus.read('w1', { blockMs: BLOCK_MS })).toEqual([{ id, envelope, deliveryCount: 1 }]);
      await bus.ack([id]);
      expect(await bus.pendingCount()).toBe(0);

      // Each kept with its raw text, for whoever inspects the dead letters.
      const error = 'not a valid command envelope';
      expect(await stored()).toEqual([
        { envelope: null, raw: 'not json', error, deliveryCount: 1 },
        { envelope: null, raw: JSON.stringify({ commandId: '' }), error, deliveryCount: 1 },
        { envelope: null, raw: '', error, deliveryCount: 1 },
      ]);

      await sleep(PAST_CLAIM_IDLE_MS);
      expect(await bus.read('w2', { blockMs: BLOCK_MS })).toEqual([]);
    });

    it('dead-letters a command that failed the full parse with its text exactly as it was on the stream', async () => {
      const harness = open();
      const bus = await harness.connect();
      const stream = `${harness.prefix}commands`;
      const shapeOnly = {
        ...makeEnvelope(),
        command: { type: 'DeleteCompetitor', payload: { competitorId: 'not-a-uuid' } },
      };
      // Spacing and an unknown key: the shape check strips the key, so re-serializing the delivered
      // envelope would not give this text back.
      const text = JSON.stringify({ extra: 1, ...shapeOnly }, null, 1);
      const id = await adminClient().xadd(stream, '*', 'envelope', text);
      const [delivery] = await bus.read('w1', { blockMs: BLOCK_MS });
      expect(delivery?.id).toBe(id);
      await bus.deadLetterInvalid(delivery!);
      expect(await bus.pendingCount()).toBe(0);
      expect(await stored()).toEqual([
        { envelope: null, raw: text, error: 'not a valid command envelope', deliveryCount: 1 },
      ]);
    });

    it('moves the dead letters an earlier version kept on Redis into the database, once', async () => {
      const harness = open();
      const { bus } = await harness.connectRedis();
      const old = `${harness.prefix}commands:dead`;
      const envelope = makeEnvelope();
      const fields = (id: string, kind: string, body: string, error: string, count: number) =>
        ['id', id, kind, body, 'error', error, 'deliveryCount', String(count)] as const;
      await adminClient().xadd(old, '*', ...fields('1-0', 'envelope', JSON.stringify(envelope), 'boom', 5));
      await adminClient().xadd(
        old,
        '*',
        ...fields('2-0', 'raw', 'not json', 'not a valid command envelope', 1),
      );

      expect(await bus.adoptOldDeadLetters()).toBe(2);
      expect(await stored()).toEqual([
        { envelope, error: 'boom', deliveryCount: 5 },
        { envelope: null, raw: 'not json', error: 'not a valid command envelope', deliveryCount: 1 },
      ]);
      expect(await adminClient().exists(old)).toBe(0);
      // A second instance starting later finds nothing left to move.
      expect(await bus.adoptOldDeadLetters()).toBe(0);
      expect(await deadLetters.store.count()).toBe(2);
    });

    it('loses none of the dead letters an instance on the earlier version adds while they are moved', async () => {
      const harness = open();
      const { bus } = await harness.connectRedis();
      const old = `${harness.prefix}commands:dead`;
      const fields = (id: string, error: string) =>
        ['id', id, 'raw', `entry ${id}`, 'error', error, 'deliveryCount', '1'] as const;
      await adminClient().xadd(old, '*', ...fields('1-0', 'first'));
      // An instance still on the earlier version gives up on another entry while the first is moved.
      const letters = deadLetters.store;
      const add = letters.add.bind(letters);
      letters.add = async (letter) => {
        letters.add = add;
        await adminClient().xadd(old, '*', ...fields('2-0', 'added meanwhile'));
        await add(letter);
      };
      try {
        await bus.adoptOldDeadLetters();
      } finally {
        letters.add = add;
      }
      await bus.adoptOldDeadLetters();
      expect((await stored()).map((letter) => letter.error).sort()).toEqual(['added meanwhile', 'first']);
      expect(await adminClient().exists(old)).toBe(0);
    });

    it('moves the dead letters an instance on the earlier version adds after this one started, as it trims', async () => {
      const harness = open();
      const { bus } = await harness.connectRedis();
      const old = `${harness.prefix}commands:dead`;
      expect(await bus.adoptOldDeadLetters()).toBe(0);
      // The last instance on the earlier version still runs beside this one (a rolling upgrade).
      await adminClient().xadd(old, '*', 'id', '7-0', 'raw', 'late', 'error', 'late', 'deliveryCount', '1');
      await bus.send(makeEnvelope());
      const deliveries = await bus.read('w1', { blockMs: BLOCK_MS });
      await bus.ack(idsOf(deliveries));
      await bus.trim();
      expect(await stored()).toEqual([{ envelope: null, raw: 'late', error: 'late', deliveryCount: 1 }]);
      expect(await adminClient().exists(old)).toBe(0);
    });

    it('moves dead letters with broken fields from an earlier version without refusing to start', async () => {
      const harness = open();
      const { bus } = await harness.connectRedis();
      const old = `${harness.prefix}commands:dead`;
      const entry = (id: string, raw: string, count: string) =>
        ['id', id, 'raw', raw, 'error', 'e\u0000', 'deliveryCount', count] as const;
      await adminClient().xadd(old, '*', ...entry('1-0', 'a', 'many'));
      await adminClient().xadd(old, '*', ...entry('2-0', 'b', '1.5'));
      await adminClient().xadd(old, '*', ...entry('3-0', 'c', '99999999999'));
      await adminClient().xadd(old, '*', ...entry('4\u0000-0', 'd', '1'));
      await adminClient().xadd(old, '*', ...entry('5'.repeat(10_000), 'e', '1'));

      expect(await bus.adoptOldDeadLetters()).toBe(5);
      expect(await stored()).toEqual(
        ['a', 'b', 'c', 'd', 'e'].map((raw) => ({
          envelope: null,
          raw,
          error: 'e\ufffd',
          deliveryCount: raw === 'd' || raw === 'e' ? 1 : 0,
        })),
      );
      expect(await adminClient().exists(old)).toBe(0);
    });

    it('claims the live entries a crashed consumer left, not the ones deleted while pending', async () => {
      const harness = open();
      const crashed = await harness.connect();
      const survivor = await harness.connect();
      const stream = `${harness.prefix}commands`;
      const sent = envelopes(3);
      const ids = await sendAll(crashed, sent);
      expect(await crashed.read('crashed', { blockMs: BLOCK_MS })).toHaveLength(3);
      await adminClient().xdel(stream, ids[1]!);
      await sleep(PAST_CLAIM_IDLE_MS);
      expect(await survivor.read('survivor', { blockMs: BLOCK_MS })).toEqual([
        { id: ids[0], envelope: sent[0], deliveryCount: 2 },
        { id: ids[2], envelope: sent[2], deliveryCount: 2 },
      ]);
      expect(await survivor.pendingCount()).toBe(2);
    });

    it('trims acknowledged entries below the oldest pending one', async () => {
      const harness = open();
      const bus = await harness.connect();
      const stream = `${harness.prefix}commands`;
      const ids = await sendAll(bus, envelopes(6));
      await bus.read('w1', { count: 4, blockMs: BLOCK_MS });
      await bus.ack([ids[0]!, ids[1]!, ids[3]!]);
      await bus.trim();
      // 0 and 1 are gone; 2 is pending, 3 is acknowledged but above it, 4 and 5 are undelivered.
      const left = (await adminClient().xrange(stream, '-', '+')).map(([id]) => id);
      expect(left).toEqual(ids.slice(2));

      await bus.ack([ids[2]!]);
      await bus.trim();
      expect((await adminClient().xrange(stream, '-', '+')).map(([id]) => id)).toEqual(ids.slice(4));
    });

    it('does not hang a blocking read when its connection is killed', async () => {
      const harness = open();
      const { bus, blockingName } = await harness.connectRedis();
      const sender = await harness.connect();

      const connectionId = async (): Promise<string | undefined> => {
        const list = String(await adminClient().call('CLIENT', 'LIST'));
        const line = list.split('\n').find((l) => l.includes(` name=${blockingName} `));
        return line?.match(/\bid=(\d+)/)?.[1];
      };

      // Warm the connection so it exists and carries its name.
      expect(await bus.read('w1', { blockMs: BLOCK_MS })).toEqual([]);
      const killedId = await connectionId();
      expect(killedId).toBeDefined();

      const interrupted = settle(bus.read('w1', { blockMs: 2_000 }));
      await sleep(100);
      expect(await adminClient().call('CLIENT', 'KILL', 'ID', killedId!)).toBe(1);

      const envelope = makeEnvelope();
      const id = await sender.send(envelope);
      const first = await Promise.race([interrupted, sleep(4_000).then(() => 'hung' as const)]);
      expect(first).not.toBe('hung');
      const delivered = first === 'hung' ? [] : [...(first.value ?? [])];
      if (!delivered.some((d) => d.id === id)) {
        delivered.push(...(await readUntil(bus, 'w1', (all) => all.some((d) => d.id === id), 4_000)));
      }

      expect(delivered).toContainEqual({ id, envelope, deliveryCount: 1 });
      // It really was a new connection.
      const reconnectedId = await connectionId();
      expect(reconnectedId).toBeDefined();
      expect(reconnectedId).not.toBe(killedId);
    });
  });
}
