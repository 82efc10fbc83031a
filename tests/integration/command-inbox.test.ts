import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BusEnvelope } from '#events/command-shape.ts';
import type { CommandEnvelope } from '#events/command.ts';
import { competitorStream } from '#events/streams.ts';
import { loadConfig } from '#infra/config.ts';
import { createRedisClient } from '#infra/redis.ts';
import { bootstrapContent } from '#services/bootstrap/bootstrap.ts';
import { startRuntime, type Runtime } from '#web/runtime.server.ts';
import { backendUrl, databaseBackends, runs } from '#tests/support/environment.ts';
import { addCompetitorCommand, giveUp, silentLog, testActor } from '#tests/support/runtime-pieces.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';

/**
 * "Accepted" is a promise: a command admitted to the inbox is applied even when the bus that carried it
 * loses it — the in-process bus dying with its process, or Redis restarting without persistence.
 */
const setups = [
  ...databaseBackends.map((backend) => ({ name: `${backend}, in-process bus`, backend, redis: false })),
  ...(runs('redis') && runs('postgres')
    ? [{ name: 'postgres, Redis bus', backend: 'postgres' as const, redis: true }]
    : []),
];

/** Waits for the command's outcome: accepted, with exactly one event on the competitor's stream. */
async function expectAddedOnce(runtime: Runtime, commandId: string, competitorId: string): Promise<void> {
  let stored = await runtime.store.findOutcome(commandId);
  for (let tries = 0; !stored && tries < 200; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    stored = await runtime.store.findOutcome(commandId);
  }
  expect(stored?.status).toBe('accepted');
  const { events } = await runtime.store.readStream(competitorStream(competitorId));
  expect(events.map((e) => e.type)).toEqual(['CompetitorAdded']);
}

describe.each(setups)('command inbox on $name', ({ backend, redis }) => {
  let db: TestDatabase;
  const prefix = `rivals-test-inbox-${randomUUID().slice(0, 8)}:`;

  const config = () =>
    loadConfig({
      LOG_LEVEL: 'silent',
      SESSION_SECRET: 'x'.repeat(40),
      INBOX_RESEND_AFTER_MS: '300',
      ...(redis ? { DATABASE_URL: db.url, REDIS_URL: backendUrl('redis'), REDIS_PREFIX: prefix } : {}),
    });

  beforeAll(async () => {
    db = await createTestDatabase(backend);
    const runtime = await startRuntime(config(), silentLog, { purpose: 'test', db, work: true });
    await bootstrapContent(runtime.store, runtime.route, { demoData: false });
    await runtime.close();
  });

  afterAll(async () => {
    if (redis) {
      const client = createRedisClient(backendUrl('redis'), silentLog, { name: 'cleanup' });
      const keys = await client.keys(`${prefix}*`);
      if (keys.length > 0) await client.del(...keys);
      client.disconnect();
    }
    await db.drop();
  });

  it('a command whose bus entry was lost is re-sent from the inbox and applied exactly once', async () => {
    // A web-only process admits the command and puts it on the bus; nobody consumes it...
    const web = await startRuntime(config(), silentLog, { purpose: 'test', db, work: false });
    const command = addCompetitorCommand(`Inboxed ${randomUUID().slice(0, 8)}`);
    const { outcome, commandId } = await web.gateway.dispatch(command, testActor, { timeoutMs: 200 });
    expect(outcome).toBeUndefined();
    expect((await web.inbox.backlog()).count).toBe(1);
    // ...and the bus loses it: the process (and its in-memory bus) dies, or Redis restarts empty.
    if (web.redis) await web.redis.del(`${prefix}commands`);
    await web.close();

    const worker = await startRuntime(config(), silentLog, { purpose: 'test', db, work: true });
    try {
      await expectAddedOnce(worker, commandId, command.payload.competitorId);
      for (let tries = 0; (await worker.inbox.backlog()).count > 0 && tries < 100; tries++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await worker.inbox.backlog()).count).toBe(0);
    } finally {
      await worker.close();
    }
  });

  it('a dead letter survives a restart of the bus, and its Retry is then applied exactly once', async () => {
    // A worker gave up on a change: dead-lettered and settled in the inbox...
    const web = await startRuntime(config(), silentLog, { purpose: 'test', db, work: false });
    const command = addCompetitorCommand(`Given up ${randomUUID().slice(0, 8)}`);
    const { commandId } = await web.gateway.dispatch(command, testActor, { timeoutMs: 50 });
    const { rows } = await db.pool.query<{ envelope: CommandEnvelope }>(
      'SELECT envelope FROM command_inbox WHERE command_id = $1',
      [commandId],
    );
    const letterId = await giveUp(web, rows[0]!.envelope);
    await web.inbox.settle([commandId]);
    // ...then the bus loses everything: the process (and its in-memory bus) dies, or Redis restarts empty.
    if (web.redis) await web.redis.del(`${prefix}commands`, `${prefix}commands:dead`);
    await web.close();

    const worker = await startRuntime(config(), silentLog, { purpose: 'test', db, work: true });
    try {
      expect(await worker.deadLetters.find(letterId)).toMatchObject({ envelope: { commandId } });
      expect(await worker.deadLetters.retry(letterId)).toMatchObject({ envelope: { commandId } });
      await worker.bus.send(rows[0]!.envelope);
      await expectAddedOnce(worker, commandId, command.payload.competitorId);
      expect(await worker.deadLetters.find(letterId)).toBeUndefined();
    } finally {
      await worker.close();
    }
  });

  it('a command given up on and retried a week later counts as waiting since the retry', async () => {
    const web = await startRuntime(config(), silentLog, { purpose: 'test', db, work: false });
    try {
      const command = addCompetitorCommand(`Retried late ${randomUUID().slice(0, 8)}`);
      const { commandId } = await web.gateway.dispatch(command, testActor, { timeoutMs: 50 });
      await web.inbox.settle([commandId]);
      await db.pool.query(
        `UPDATE command_inbox SET accepted_at = now() - interval '7 days' WHERE command_id = $1`,
        [commandId],
      );
      const { rows } = await db.pool.query<{ envelope: BusEnvelope }>(
        'SELECT envelope FROM command_inbox WHERE command_id = $1',
        [commandId],
      );
      await web.deadLetters.add({
        busEntryId: '1',
        envelope: rows[0]!.envelope,
        error: 'boom',
        deliveryCount: 5,
      });
      const [letter] = await web.deadLetters.list();
      expect(await web.deadLetters.retry(letter!.id)).toMatchObject({ envelope: rows[0]!.envelope });
      const { count, oldestSeconds } = await web.inbox.backlog();
      expect(count).toBe(1);
      expect(oldestSeconds).toBeLessThan(60);
      await web.inbox.settle([commandId]);
    } finally {
      await web.close();
    }
  });

  it('when the database cannot take the command, the caller hears 503 and nothing is stored', async () => {
    const web = await startRuntime(config(), silentLog, { purpose: 'test', db, work: false });
    try {
      const admit = web.inbox.admit.bind(web.inbox);
      web.inbox.admit = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
      const command = addCompetitorCommand(`Refused ${randomUUID().slice(0, 8)}`);
      await expect(web.gateway.dispatch(command, testActor, { timeoutMs: 200 })).rejects.toMatchObject({
        status: 503,
        message: expect.stringMatching(/Nothing was saved/) as unknown,
      });
      web.inbox.admit = admit;
      const { events } = await web.store.readStream(competitorStream(command.payload.competitorId));
      expect(events).toHaveLength(0);
    } finally {
      await web.close();
    }
  });

  it('when the disk is full, the caller hears 503 saying so, and nothing is stored', async () => {
    const web = await startRuntime(config(), silentLog, { purpose: 'test', db, work: false });
    try {
      const admit = web.inbox.admit.bind(web.inbox);
      // What Postgres and PGlite answer when the data folder's disk is full (found on a full tmpfs).
      const diskFull = Object.assign(
        new Error('could not extend file "base/5/16550": No space left on device'),
        {
          code: '53100',
        },
      );
      web.inbox.admit = () => Promise.reject(diskFull);
      const command = addCompetitorCommand(`Disk full ${randomUUID().slice(0, 8)}`);
      await expect(web.gateway.dispatch(command, testActor, { timeoutMs: 200 })).rejects.toMatchObject({
        status: 503,
        message: expect.stringMatching(/disk is full\. Nothing was saved/) as unknown,
      });
      web.inbox.admit = admit;
      const { events } = await web.store.readStream(competitorStream(command.payload.competitorId));
      expect(events).toHaveLength(0);
    } finally {
      await web.close();
    }
  });
});
