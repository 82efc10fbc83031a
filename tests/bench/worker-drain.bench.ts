/**
 * Command worker drain rate: a Redis stream filled with N commands, drained by `startCommandWorker`
 * (RedisCommandBus, batches of 100, no-op handler that accepts at once, a results channel that
 * discards) against a raw loop of XREADGROUP COUNT 100 + one XACK per batch, with the same ioredis
 * settings (`createRedisClient`). Each run gets a fresh stream; everything is deleted afterwards.
 * Target: worker ≥ 80% of raw.
 *
 * `raw-parse` is the raw loop plus `JSON.parse` of each envelope: not a target, a reference. Any consumer
 * has to parse what it reads, and on a machine where this process's CPU is the limit that parse alone is
 * a large share of raw's time per message; worker vs raw-parse is the worker's own overhead (shape check,
 * lanes, answers, settle and ack bookkeeping).
 *
 *   npx tsx tests/bench/worker-drain.bench.ts [--messages=100000] [--rounds=5] [--competitors=64]
 *     [--subjects=worker,raw,raw-parse]
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { RedisCommandBus } from '#events/bus/redis-command-bus.ts';
import type { ResultChannel } from '#events/bus/result-channel.ts';
import type { CommandEnvelope, Outcome } from '#events/command.ts';
import type { DeadLetterSink } from '#events/store/dead-letters.ts';
import { createRedisClient, type Redis } from '#infra/redis.ts';
import { startCommandWorker } from '#services/command-worker.ts';
import { caseKnob, knob } from './support/knobs.ts';
import { redisUrl, silentLog, uniqueSuffix } from './support/services.ts';
import { reportMachine } from './support/machine.ts';
import { medianSpread, report } from './support/stats.ts';

const messages = knob('messages', 100_000);
const rounds = knob('rounds', 5);
const competitors = knob('competitors', 64);
const BATCH = 100;
const prefix = `bench:drain:${uniqueSuffix()}:`;
const allSubjects = ['worker', 'raw', 'raw-parse'] as const;
type Subject = (typeof allSubjects)[number];
const subjects = caseKnob('subjects', allSubjects);

const accepted: Outcome = { status: 'accepted', positions: [], transactionId: '0', streamVersion: 0 };
const discard: ResultChannel = {
  address: `${prefix}results:discard`,
  publish: async () => undefined,
  subscribe: () => () => undefined,
  close: async () => undefined,
};
const competitorIds = Array.from({ length: competitors }, () => randomUUID());
const envelopeJson = (i: number): string => {
  const commandId = randomUUID();
  const envelope: CommandEnvelope = {
    commandId,
    correlationId: commandId,
    actor: { id: 'bench', name: 'Bench' },
    at: new Date().toISOString(),
    replyTo: discard.address,
    command: {
      type: 'UpdateCompetitorNote',
      payload: { competitorId: competitorIds[i % competitors] ?? '', column: 'general', value: `note ${i}` },
    },
  };
  return JSON.stringify(envelope);
};

const redis = createRedisClient(redisUrl, silentLog, { name: 'bench-commands' });

async function fill(stream: string): Promise<void> {
  for (let start = 0; start < messages; start += 1_000) {
    const pipeline = redis.pipeline();
    for (let i = start; i < Math.min(messages, start + 1_000); i++)
      pipeline.xadd(stream, '*', 'envelope', envelopeJson(i));
    await pipeline.exec();
  }
}

/** Every command here is accepted: nothing is given up on, and a bus that tried would say so. */
const noDeadLetters: DeadLetterSink = {
  add: () => Promise.reject(new Error('the drain benchmark gives up on no command')),
};

async function drainWithWorker(busPrefix: string, blocking: Redis): Promise<number> {
  const bus = new RedisCommandBus(redis, blocking, busPrefix, noDeadLetters);
  await bus.ensureGroup();
  let acked = 0;
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const ack = bus.ack.bind(bus);
  bus.ack = async (ids) => {
    await ack(ids);
    acked += ids.length;
    if (acked >= messages) finish();
  };
  const started = performance.now();
  const worker = startCommandWorker({
    bus,
    results: discard,
    route: async () => accepted,
    log: silentLog,
    consumer: 'bench-worker',
    batchSize: BATCH,
    blockMs: 100,
  });
  await done;
  const seconds = (performance.now() - started) / 1000;
  await worker.stop();
  return messages / seconds;
}

async function drainRaw(stream: string, blocking: Redis, parse: boolean): Promise<number> {
  await redis.xgroup('CREATE', stream, 'workers', '0', 'MKSTREAM');
  const started = performance.now();
  let acked = 0;
  let parsed = 0;
  while (acked < messages) {
    const reply = (await blocking.call(
      'XREADGROUP',
      'GROUP',
      'workers',
      'bench-raw',
      'COUNT',
      BATCH,
      'BLOCK',
      100,
      'STREAMS',
      stream,
      '>',
    )) as [string, [string, string[]][]][] | null;
    const entries = reply?.[0]?.[1] ?? [];
    // Kept apart from the id map so plain raw does exactly what it did before this reference existed.
    if (parse) for (const [, fields] of entries) parsed += JSON.parse(fields[1] ?? 'null') ? 1 : 0;
    const ids = entries.map(([id]) => id);
    if (ids.length > 0) await redis.xack(stream, 'workers', ...ids);
    acked += ids.length;
  }
  if (parse && parsed !== acked) throw new Error(`parsed ${parsed} envelopes of ${acked}`);
  return messages / ((performance.now() - started) / 1000);
}

/** Drains a freshly filled stream; the rate, and this process's CPU per message while draining. */
async function measure(subject: Subject, run: string): Promise<{ rate: number; cpuUs: number }> {
  const busPrefix = `${prefix}${run}:`;
  const stream = `${busPrefix}commands`;
  await fill(stream);
  const blocking = createRedisClient(redisUrl, silentLog, { name: 'bench-reader', blockMs: 2_000 });
  try {
    await blocking.ping();
    const cpu = process.cpuUsage();
    const rate =
      subject === 'worker'
        ? await drainWithWorker(busPrefix, blocking)
        : await drainRaw(stream, blocking, subject === 'raw-parse');
    const used = process.cpuUsage(cpu);
    return { rate, cpuUs: (used.user + used.system) / messages };
  } finally {
    blocking.disconnect();
    await redis.del(stream, `${busPrefix}commands:dead`);
  }
}

try {
  for (const subject of subjects) await measure(subject, `warmup-${subject}`);
  const rates = new Map<Subject, number[]>(subjects.map((s) => [s, []]));
  const cpu = new Map<Subject, number[]>(subjects.map((s) => [s, []]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? subjects : [...subjects].reverse();
    for (const subject of order) {
      const { rate, cpuUs } = await measure(subject, `${round}-${subject}`);
      rates.get(subject)?.push(rate);
      cpu.get(subject)?.push(cpuUs);
      process.stdout.write(
        `  round ${round + 1}/${rounds} ${subject}: ${rate.toFixed(0)} msgs/s, ${cpuUs.toFixed(1)} µs CPU/msg\n`,
      );
    }
  }
  for (const [subject, list] of rates) {
    const spread = medianSpread(list);
    report(`worker-drain.${subject}`, {
      rounds: list.length,
      messages,
      msgs_per_s: Math.round(spread.median),
      min: Math.round(spread.min),
      max: Math.round(spread.max),
      // This process's CPU per message (Redis's own work is the same for both).
      node_cpu_us_per_msg: medianSpread(cpu.get(subject) ?? []).median,
    });
  }
  // Same-round ratios: both subjects of a round ran back to back, on the same load.
  const ratio = (of: Subject, to: Subject) => {
    const base = rates.get(to) ?? [];
    return medianSpread((rates.get(of) ?? []).map((w, i) => (100 * w) / (base[i] ?? Number.NaN)));
  };
  if (rates.has('worker') && rates.has('raw')) {
    const vsRaw = ratio('worker', 'raw');
    report('worker-drain.ratio.worker-vs-raw', {
      pct: vsRaw.median,
      pct_min: vsRaw.min,
      pct_max: vsRaw.max,
      target_pct: 80,
      met: vsRaw.median >= 80 ? 'yes' : 'no',
    });
  }
  if (rates.has('worker') && rates.has('raw-parse')) {
    const vsParse = ratio('worker', 'raw-parse');
    report('worker-drain.ratio.worker-vs-raw-parse', {
      pct: vsParse.median,
      pct_min: vsParse.min,
      pct_max: vsParse.max,
    });
  }
  reportMachine('worker-drain');
} finally {
  // Anything a failed run left behind.
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
}
