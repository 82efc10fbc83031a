import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisCommandBus } from '#events/bus/redis-command-bus.ts';
import { DeadLetterStore } from '#events/store/dead-letters.ts';
import { noteColumns } from '#events/competitor/fields.ts';
import type { CommandEnvelope } from '#events/command.ts';
import { createRedisClient } from '#infra/redis.ts';
import { backendUrl } from '#tests/support/environment.ts';
import { addCompetitorCommand, envelope, silentLog, writeSide } from '#tests/support/runtime-pieces.ts';
import { createTestDatabase } from '#tests/support/test-database.ts';

/**
 * The crash fault test: a real worker process (`ROLE=worker`) consumes UpdateCompetitorNote commands from
 * the Redis bus while it is SIGKILLed and restarted again and again. A command whose events were committed
 * but whose bus entry was never acknowledged comes back (XAUTOCLAIM after BUS_CLAIM_IDLE_MS) and must append
 * nothing; one that was read but not handled must still be handled. In the end every command has exactly one
 * event and one accepted outcome, and the bus holds nothing pending and no dead letters.
 */

const KILLS = 20;
const COMMANDS = 2_000;
const COMPETITORS = 20;
const CLAIM_IDLE_MS = 1_000;
/** A worker is killed this long (random in the range) after it became ready. */
const KILL_DELAY_MS = [300, 1_500] as const;
/** The producer tops the bus up this often, never more than MAX_BURST commands at a time. */
const PRODUCER_TICK_MS = 100;
const MAX_BURST = 60;
const READY_TIMEOUT_MS = 30_000;
const DRAIN_TIMEOUT_MS = 90_000;
const GROUP = 'workers';
import { configKeys, freePort } from '../e2e/support/server.ts';
import { deleteKeys } from '#tests/support/redis-keys.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch((e: unknown) => console.error(e));
});

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** One worker process: its output kept for diagnosis, its exit watched. */
class WorkerProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<Exit>;
  exit: Exit | undefined;
  private output: string[] = [];
  private partial = '';

  constructor(
    env: NodeJS.ProcessEnv,
    private readonly errorLines: string[],
  ) {
    this.child = spawn(process.execPath, ['--import', 'tsx', 'web/main.server.ts'], {
      cwd: repoRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout?.on('data', (chunk: Buffer) => this.collect(chunk));
    this.child.stderr?.on('data', (chunk: Buffer) => this.collect(chunk));
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      });
      this.child.once('error', (error) => {
        this.output.push(`spawn failed: ${error.message}`);
        this.exit = { code: -1, signal: null };
        resolve(this.exit);
      });
    });
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error(`the worker did not start:\n${this.tail()}`);
    return this.child.pid;
  }

  /** The last lines it printed. */
  tail(lines = 30): string {
    return [...this.output, this.partial].filter(Boolean).slice(-lines).join('\n');
  }

  /** Sends SIGKILL and waits for the process to be gone. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<Exit> {
    if (!this.exit) this.child.kill(signal);
    return this.exited;
  }

  private collect(chunk: Buffer) {
    const lines = (this.partial + chunk.toString('utf8')).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim()) continue;
      this.output.push(line);
      if (this.output.length > 200) this.output.shift();
      // pino: error is 50, fatal 60; anything not JSON on stderr counts as an error too.
      let level = 50;
      try {
        level = Number((JSON.parse(line) as { level?: unknown }).level ?? 50);
      } catch {
        // not a log line
      }
      if (level >= 50) this.errorLines.push(`[pid ${this.child.pid}] ${line}`);
    }
  }
}

/** Field value from a flat Redis reply ([name, value, name, value, …]). */
const field = (fields: unknown[], name: string): unknown => {
  const i = fields.indexOf(name);
  return i >= 0 && i % 2 === 0 ? fields[i + 1] : undefined;
};

describe('worker crash', () => {
  it(`loses and duplicates no command while the worker is SIGKILLed ${KILLS} times`, async () => {
    // A real Postgres and Redis, always: throws naming the missing variable (this test never skips).
    const testRedisUrl = backendUrl('redis');
    backendUrl('postgres');
    const startedAt = Date.now();
    const runId = randomBytes(6).toString('hex');
    const prefix = `rivals-fault-${runId}:`;
    const stream = `${prefix}commands`;

    // --- Postgres: a fresh database with competitors -------------------------------------------------------
    const db = await createTestDatabase('postgres');
    cleanups.push(() => db.drop());
    const databaseUrl = db.url;
    if (!databaseUrl) throw new Error('createTestDatabase returned no URL');
    const { route } = await writeSide(db);
    const competitorIds: string[] = [];
    for (let i = 0; i < COMPETITORS; i++) {
      const command = addCompetitorCommand(`Fault rival ${i + 1}`);
      const outcome = await route(envelope(command));
      expect(outcome.status, `seeding competitor ${i + 1}`).toBe('accepted');
      competitorIds.push(command.payload.competitorId);
    }

    // --- Redis: our own bus client under a unique prefix --------------------------------------------------
    const redis = createRedisClient(testRedisUrl, silentLog, { name: `fault-test-${runId}` });
    const blocking = createRedisClient(testRedisUrl, silentLog, {
      name: `fault-test-blocking-${runId}`,
      blockMs: 2_000,
    });
    cleanups.push(async () => {
      await deleteKeys(redis, prefix);
      await bus.close();
      await redis.quit().catch(() => redis.disconnect());
    });
    const bus = new RedisCommandBus(redis, blocking, prefix, new DeadLetterStore(db.pool), {
      claimIdleMs: CLAIM_IDLE_MS,
    });
    await bus.ensureGroup();

    // --- Worker processes ---------------------------------------------------------------------------------
    const workerEnv: NodeJS.ProcessEnv = { ...process.env };
    for (const key of configKeys) delete workerEnv[key];
    Object.assign(workerEnv, {
      ROLE: 'worker',
      // Its health endpoint binds here (loopback, a port nobody else uses in this test).
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      DATABASE_URL: databaseUrl,
      REDIS_URL: testRedisUrl,
      REDIS_PREFIX: prefix,
      SESSION_SECRET: randomBytes(32).toString('hex'),
      BUS_CLAIM_IDLE_MS: String(CLAIM_IDLE_MS),
      LOG_LEVEL: 'warn',
      DEMO_DATA: 'false',
    });
    const errorLines: string[] = [];
    const workers: WorkerProcess[] = [];
    cleanups.push(async () => {
      for (const w of workers) {
        if (w.exit) continue;
        w.child.kill('SIGTERM');
        const gone = await Promise.race([w.exited, sleep(5_000).then(() => undefined)]);
        if (!gone) await w.kill('SIGKILL');
      }
    });
    const startWorker = () => {
      const worker = new WorkerProcess(workerEnv, errorLines);
      workers.push(worker);
      return worker;
    };

    /**
     * Ready once it subscribed to its results channel (`<prefix>results:<host>-<pid>-<random>`), the last
     * Redis step before its command loop starts reading the bus. Not its entry in XINFO CONSUMERS: Redis
     * 7.0 adds a consumer only when it is handed entries, so an idle worker would never look ready.
     */
    const waitReady = async (worker: WorkerProcess) => {
      const channelPrefix = `${prefix}results:${os.hostname()}-${worker.pid}-`;
      const deadline = Date.now() + READY_TIMEOUT_MS;
      for (;;) {
        if (worker.exit) {
          throw new Error(
            `worker ${worker.pid} exited before it was ready (${JSON.stringify(worker.exit)}):\n${worker.tail()}`,
          );
        }
        const channels = (await redis.pubsub('CHANNELS', `${prefix}results:*`)) as string[];
        if (channels.some((channel) => channel.startsWith(channelPrefix))) return;
        if (Date.now() > deadline) {
          throw new Error(
            `worker ${worker.pid} not ready after ${READY_TIMEOUT_MS} ms ` +
              `(results channels: ${JSON.stringify(channels)}):\n${worker.tail()}`,
          );
        }
        await sleep(25);
      }
    };

    /** What the dead worker had read but not acknowledged, and how much of that it had already committed. */
    const inFlightOf = async (worker: WorkerProcess) => {
      const consumers = (await redis.xinfo('CONSUMERS', stream, GROUP)) as unknown[][];
      const name = consumers
        .map((c) => String(field(c, 'name')))
        .find((n) => n.startsWith(`${os.hostname()}-${worker.pid}-`));
      if (!name) return { pending: 0, committed: 0 };
      const rows = (await redis.xpending(stream, GROUP, '-', '+', 10_000, name)) as [string, ...unknown[]][];
      const ids = rows.map(([id]) => id);
      const commandIdsInFlight: string[] = [];
      for (const id of ids) {
        const entries = (await redis.xrange(stream, id, id)) as [string, string[]][];
        const raw = entries[0] ? field(entries[0][1], 'envelope') : undefined;
        if (typeof raw === 'string') commandIdsInFlight.push((JSON.parse(raw) as CommandEnvelope).commandId);
      }
      const { rows: committed } = await db.pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM command_outcomes WHERE command_id = ANY($1)',
        [commandIdsInFlight],
      );
      return { pending: ids.length, committed: committed[0]?.n ?? 0 };
    };

    // --- Producer: 2,000 distinct note changes, paced by the kill cycles ----------------------------------
    const commandIds: string[] = [];
    const pace = { cycles: 0, cycleStartedAt: Date.now(), cycleMs: 2_000, finished: false };
    const makeCommand = (i: number): CommandEnvelope =>
      envelope({
        type: 'UpdateCompetitorNote',
        payload: {
          competitorId: competitorIds[i % COMPETITORS] ?? '',
          column: noteColumns[Math.floor(i / COMPETITORS) % noteColumns.length] ?? 'general',
          value: `fault note ${i} of run ${runId}`,
        },
      });
    let producerError: unknown;
    const producer = (async () => {
      let sent = 0;
      while (sent < COMMANDS) {
        const within = Math.min(1, (Date.now() - pace.cycleStartedAt) / pace.cycleMs);
        const share = pace.finished ? 1 : Math.min(1, (pace.cycles + within) / KILLS);
        const burst = Math.min(Math.floor(COMMANDS * share) - sent, MAX_BURST);
        if (burst > 0) {
          const batch = Array.from({ length: burst }, (_, k) => makeCommand(sent + k));
          sent += burst;
          for (const command of batch) commandIds.push(command.commandId);
          await Promise.all(batch.map((command) => bus.send(command)));
        }
        await sleep(PRODUCER_TICK_MS);
      }
    })().catch((error: unknown) => {
      producerError = error;
    });

    // --- Killer: SIGKILL at a random moment after each start, restart, 20 times ----------------------------
    let kills = 0;
    let inFlightAtKills = 0;
    let committedButUnacked = 0;
    let killsWithWorkInFlight = 0;
    let worker = startWorker();
    await waitReady(worker);
    pace.cycleStartedAt = Date.now();
    const killPhaseStartedAt = Date.now();
    for (let k = 0; k < KILLS; k++) {
      const [min, max] = KILL_DELAY_MS;
      await sleep(min + Math.random() * (max - min));
      if (producerError) throw producerError;
      if (worker.exit) {
        throw new Error(
          `worker ${worker.pid} died on its own (${JSON.stringify(worker.exit)}):\n${worker.tail()}`,
        );
      }
      const exit = await worker.kill('SIGKILL');
      if (exit.signal === 'SIGKILL') kills++;
      const inFlight = await inFlightOf(worker);
      inFlightAtKills += inFlight.pending;
      committedButUnacked += inFlight.committed;
      if (inFlight.pending > 0) killsWithWorkInFlight++;
      worker = startWorker();
      await waitReady(worker);
      pace.cycles++;
      pace.cycleMs = (Date.now() - killPhaseStartedAt) / pace.cycles;
      pace.cycleStartedAt = Date.now();
    }
    pace.finished = true;
    await producer;
    if (producerError) throw producerError;
    const killPhaseSeconds = (Date.now() - killPhaseStartedAt) / 1_000;

    // --- The last worker finishes the work ----------------------------------------------------------------
    const outcomesRecorded = async () => {
      const { rows } = await db.pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM command_outcomes WHERE command_id = ANY($1)',
        [commandIds],
      );
      return rows[0]?.n ?? 0;
    };
    const drainDeadline = Date.now() + DRAIN_TIMEOUT_MS;
    let recorded = 0;
    let pending = -1;
    for (;;) {
      if (worker.exit) {
        throw new Error(
          `worker ${worker.pid} died on its own (${JSON.stringify(worker.exit)}):\n${worker.tail()}`,
        );
      }
      recorded = await outcomesRecorded();
      pending = await bus.pendingCount();
      if (recorded === COMMANDS && pending === 0) break;
      if (Date.now() > drainDeadline) {
        throw new Error(
          `not drained after ${DRAIN_TIMEOUT_MS / 1_000} s: ${recorded}/${COMMANDS} outcomes, ${pending} pending\n` +
            `worker output:\n${worker.tail()}`,
        );
      }
      await sleep(200);
    }

    // --- Assertions ---------------------------------------------------------------------------------------
    const { rows: events } = await db.pool.query<{ command_id: string; n: number }>(
      `SELECT command_id, count(*)::int AS n FROM events
       WHERE type = 'CompetitorNoteUpdated' AND command_id = ANY($1) GROUP BY command_id`,
      [commandIds],
    );
    const { rows: outcomes } = await db.pool.query<{ command_id: string; status: string }>(
      `SELECT command_id, outcome->>'status' AS status FROM command_outcomes WHERE command_id = ANY($1)`,
      [commandIds],
    );
    const eventCount = events.reduce((sum, row) => sum + row.n, 0);
    const withEvents = new Set(events.map((row) => row.command_id));
    const lost = commandIds.filter((id) => !withEvents.has(id));
    const duplicated = events.filter((row) => row.n > 1);
    const notAccepted = outcomes.filter((row) => row.status !== 'accepted');
    const deadLetters = await new DeadLetterStore(db.pool).list();
    const seconds = (Date.now() - startedAt) / 1_000;

    console.log(
      `worker crash: ${kills} kills (${killsWithWorkInFlight} with work in flight; ${inFlightAtKills} entries left ` +
        `unacknowledged, ${committedButUnacked} of them already committed), ${commandIds.length} commands, ${eventCount} events, ` +
        `${lost.length} lost, ${duplicated.length} duplicated, ${deadLetters.length} dead letters, ` +
        `${errorLines.length} error log lines; kill phase ${killPhaseSeconds.toFixed(1)} s, total ${seconds.toFixed(1)} s`,
    );
    if (errorLines.length > 0)
      console.log(`worker error lines (first 5):\n${errorLines.slice(0, 5).join('\n')}`);

    expect(new Set(commandIds).size).toBe(COMMANDS);
    expect(kills).toBe(KILLS);
    // Otherwise every kill hit an idle worker and the redelivery path went untested.
    expect(killsWithWorkInFlight, 'kills that left read but unacknowledged commands').toBeGreaterThan(0);
    expect(lost, 'commands without an event (lost)').toEqual([]);
    expect(duplicated, 'commands with more than one event (duplicated)').toEqual([]);
    expect(eventCount).toBe(COMMANDS);
    // command_id is the table's primary key: 2,000 rows for 2,000 distinct ids is one row each.
    expect(outcomes).toHaveLength(COMMANDS);
    expect(notAccepted, 'outcomes that are not accepted').toEqual([]);
    expect(await bus.pendingCount()).toBe(0);
    expect(deadLetters).toEqual([]);
  });
});
