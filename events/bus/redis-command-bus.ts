import type { Redis } from 'ioredis';
import type { BusEnvelope } from '../command-shape.ts';
import {
  NotRetryableError,
  type BusOptions,
  type CommandBus,
  type DeadLetter,
  type Delivery,
  type ReadOptions,
} from './command-bus.ts';
import { entryId, envelopeText, parseEnvelope, type BufferEntry } from './redis-command-entries.ts';

type StreamEntry = [id: string, fields: string[]];

const GROUP = 'workers';

const field = (fields: string[], name: string): string | undefined => {
  const i = fields.indexOf(name);
  return i >= 0 && i % 2 === 0 ? fields[i + 1] : undefined;
};

/**
 * Redis lost the stream or the group: NOGROUP, or (Redis 7) a blocked XREADGROUP woken with
 * "UNBLOCKED the stream key no longer exists" because the key was deleted under it.
 */
const isNoGroup = (error: unknown) =>
  error instanceof Error && (error.message.startsWith('NOGROUP') || error.message.startsWith('UNBLOCKED'));

/** Removes a dead entry and, if given an envelope, re-sends it: both or neither, and only once. */
const TAKE_DEAD_SCRIPT = `
if redis.call('XDEL', KEYS[1], ARGV[1]) == 1 then
  if ARGV[2] ~= '' then redis.call('XADD', KEYS[2], '*', 'envelope', ARGV[2]) end
  return 1
end
return 0`;

const toDeadLetter = (fields: string[]): DeadLetter => ({
  id: field(fields, 'id') ?? '',
  envelope: JSON.parse(field(fields, 'envelope') ?? 'null') as BusEnvelope | null,
  ...(field(fields, 'raw') !== undefined ? { raw: field(fields, 'raw') } : {}),
  error: field(fields, 'error') ?? '',
  deliveryCount: Number(field(fields, 'deliveryCount') ?? 0),
});

const compareStreamIds = (a: string, b: string): number => {
  const [am = 0n, as = 0n] = a.split('-').map(BigInt);
  const [bm = 0n, bs = 0n] = b.split('-').map(BigInt);
  return am !== bm ? (am < bm ? -1 : 1) : as === bs ? 0 : as < bs ? -1 : 1;
};

/** The id right after `id` ("ms-seq"), for trimming below it. */
const nextStreamId = (id: string): string => {
  const [ms, seq] = id.split('-');
  return `${ms}-${Number(seq ?? 0) + 1}`;
};

/**
 * The scaled bus on Redis Streams: XADD, one consumer group, XREADGROUP with COUNT and BLOCK, batched
 * XACK, XAUTOCLAIM for entries a crashed consumer left, a dead-letter stream, MINID trimming below the
 * oldest pending entry, and recreation of the group if Redis lost it (NOGROUP).
 */
export class RedisCommandBus implements CommandBus {
  private readonly stream: string;
  private readonly deadStream: string;
  private readonly claimIdleMs: number;
  private readonly consumerIdleMs: number;
  private claimCursor = '0-0';
  private lastClaimAt = 0;

  /**
   * @param redis commands that return at once
   * @param blocking a connection of its own for blocking reads
   */
  constructor(
    private readonly redis: Redis,
    private readonly blocking: Redis,
    prefix: string,
    options: BusOptions = {},
  ) {
    this.stream = `${prefix}commands`;
    this.deadStream = `${prefix}commands:dead`;
    this.claimIdleMs = options.claimIdleMs ?? 30_000;
    this.consumerIdleMs = options.consumerIdleMs ?? 3_600_000;
  }

  async send(envelope: BusEnvelope): Promise<string> {
    const id = await this.redis.xadd(this.stream, '*', 'envelope', JSON.stringify(envelope));
    if (!id) throw new Error('XADD returned no id');
    return id;
  }

  async read(consumer: string, options: ReadOptions = {}): Promise<Delivery[]> {
    const count = options.count ?? 100;
    try {
      // The claim is only due every quarter idle time: most reads skip its round trip (and its await).
      const claimed = this.claimDue() ? await this.claimIdle(consumer, count) : [];
      const fresh = await this.readNew(
        consumer,
        count - claimed.length,
        claimed.length > 0 ? 0 : (options.blockMs ?? 2_000),
      );
      return claimed.length === 0 ? fresh : [...claimed, ...fresh];
    } catch (error) {
      if (!isNoGroup(error)) throw error;
      // Redis lost the stream or the group (a restart without persistence): recreate and read again.
      await this.ensureGroup();
      return [];
    }
  }

  async ack(ids: readonly string[]): Promise<void> {
    if (ids.length > 0) await this.redis.xack(this.stream, GROUP, ...ids);
  }

  async deadLetter(delivery: Delivery, error: string): Promise<void> {
    await this.moveToDeadLetters(delivery.id, ['envelope', JSON.stringify(delivery.envelope)], {
      error,
      deliveryCount: delivery.deliveryCount,
    });
  }

  /** Adds the entry to the dead letters and acknowledges it, in one transaction. */
  private async moveToDeadLetters(
    id: string,
    [kind, body]: ['envelope' | 'raw', string],
    { error, deliveryCount }: { error: string; deliveryCount: number },
  ): Promise<void> {
    await this.redis
      .multi()
      .xadd(
        this.deadStream,
        '*',
        'id',
        id,
        kind,
        body,
        'error',
        error,
        'deliveryCount',
        String(deliveryCount),
      )
      .xack(this.stream, GROUP, id)
      .exec();
  }

  /**
   * The entry's text is read back from the stream (it stays there while pending) rather than kept for every
   * delivery: a command that fails its full parse is rare, a delivery is not.
   */
  async deadLetterInvalid(delivery: Delivery): Promise<void> {
    const [entry] = (await this.redis.xrange(this.stream, delivery.id, delivery.id)) as StreamEntry[];
    const raw = entry ? field(entry[1], 'envelope') : undefined;
    await this.deadLetterRaw(delivery.id, raw ?? JSON.stringify(delivery.envelope));
  }

  /** An entry that is not a command at all: kept as it came, with why. */
  private async deadLetterRaw(id: string, raw: string): Promise<void> {
    await this.moveToDeadLetters(id, ['raw', raw], {
      error: 'not a valid command envelope',
      deliveryCount: 1,
    });
  }

  async deadLetters(limit = 100): Promise<DeadLetter[]> {
    const entries = (await this.redis.xrevrange(this.deadStream, '+', '-', 'COUNT', limit)) as StreamEntry[];
    return entries.reverse().map(([, fields]) => toDeadLetter(fields));
  }

  async deadLetterCount(): Promise<number> {
    return this.redis.xlen(this.deadStream);
  }

  async findDeadLetter(id: string): Promise<DeadLetter | undefined> {
    return (await this.findDead(id))?.letter;
  }

  async retryDeadLetter(id: string): Promise<DeadLetter | undefined> {
    const found = await this.findDead(id);
    if (!found) return undefined;
    if (!found.letter.envelope)
      throw new NotRetryableError(`dead letter ${id} is not a valid command; discard it instead`);
    return (await this.takeDead(found.entryId, JSON.stringify(found.letter.envelope)))
      ? found.letter
      : undefined;
  }

  async discardDeadLetter(id: string): Promise<DeadLetter | undefined> {
    const found = await this.findDead(id);
    if (!found) return undefined;
    return (await this.takeDead(found.entryId, '')) ? found.letter : undefined;
  }

  private async takeDead(entryId: string, envelope: string): Promise<boolean> {
    const taken = await this.redis.eval(TAKE_DEAD_SCRIPT, 2, this.deadStream, this.stream, entryId, envelope);
    return Number(taken) === 1;
  }

  /** The dead-letter stream is short (operators empty it): scanned a page at a time. */
  private async findDead(id: string): Promise<{ entryId: string; letter: DeadLetter } | undefined> {
    let start = '-';
    for (;;) {
      const entries = (await this.redis.xrange(this.deadStream, start, '+', 'COUNT', 200)) as StreamEntry[];
      for (const [entryId, fields] of entries) {
        if (field(fields, 'id') === id) return { entryId, letter: toDeadLetter(fields) };
      }
      const last = entries.at(-1);
      if (!last || entries.length < 200) return undefined;
      start = `(${last[0]}`;
    }
  }

  async pendingCount(): Promise<number> {
    try {
      const summary = (await this.redis.xpending(this.stream, GROUP)) as [number, ...unknown[]];
      return Number(summary[0]);
    } catch (error) {
      if (isNoGroup(error)) return 0;
      throw error;
    }
  }

  /**
   * Trims below both the first entry not yet delivered (read first) and the oldest pending entry (read
   * second). Entries delivered between the two reads are above the first bound, so none can be lost.
   */
  async trim(): Promise<void> {
    let lastDelivered: string | undefined;
    let summary: [number, string | null, ...unknown[]];
    try {
      const groups = (await this.redis.xinfo('GROUPS', this.stream)) as unknown[][];
      const ours = groups.find((g) => field(g as string[], 'name') === GROUP) as string[] | undefined;
      lastDelivered = ours ? field(ours, 'last-delivered-id') : undefined;
      summary = (await this.redis.xpending(this.stream, GROUP)) as [number, string | null, ...unknown[]];
    } catch (error) {
      // A lost stream or group has nothing to trim; the next read recreates the group.
      if (isNoGroup(error) || (error instanceof Error && /no such key/i.test(error.message))) return;
      throw error;
    }
    if (!lastDelivered || lastDelivered === '0-0') return;
    const bounds = [nextStreamId(lastDelivered)];
    if (Number(summary[0]) > 0 && summary[1]) bounds.push(summary[1]);
    const minId = bounds.reduce((a, b) => (compareStreamIds(a, b) <= 0 ? a : b));
    await this.redis.xtrim(this.stream, 'MINID', minId);
    await this.forgetIdleConsumers();
  }

  /**
   * Removes consumers (workers that died or were scaled away) silent longer than `consumerIdleMs` and
   * holding nothing: deleting a consumer drops its pending entries, so one with any is left for the claim.
   */
  async forgetIdleConsumers(): Promise<string[]> {
    const consumers = (await this.redis.xinfo('CONSUMERS', this.stream, GROUP)) as string[][];
    const gone: string[] = [];
    for (const consumer of consumers) {
      const name = field(consumer, 'name');
      const pending = Number(field(consumer, 'pending') ?? 1);
      const idle = Number(field(consumer, 'idle') ?? 0);
      if (!name || pending > 0 || idle < this.consumerIdleMs) continue;
      await this.redis.xgroup('DELCONSUMER', this.stream, GROUP, name);
      gone.push(name);
    }
    return gone;
  }

  /** Creates the stream and group if missing; harmless when they exist. */
  async ensureGroup(): Promise<void> {
    try {
      await this.redis.xgroup('CREATE', this.stream, GROUP, '0', 'MKSTREAM');
    } catch (error) {
      if (!(error instanceof Error && error.message.startsWith('BUSYGROUP'))) throw error;
    }
  }

  async close(): Promise<void> {
    this.blocking.disconnect();
  }

  private async readNew(consumer: string, count: number, blockMs: number): Promise<Delivery[]> {
    if (count <= 0) return [];
    const args: (string | number)[] = ['GROUP', GROUP, consumer, 'COUNT', count];
    if (blockMs > 0) args.push('BLOCK', blockMs);
    args.push('STREAMS', this.stream, '>');
    const reply = (await this.blocking.callBuffer('XREADGROUP', ...args)) as [Buffer, BufferEntry[]][] | null;
    const entries = reply?.[0]?.[1] ?? [];
    return this.toDeliveries(entries, () => 1);
  }

  /** XAUTOCLAIM walks the pending list a page at a time; we take a step at most every quarter idle time. */
  private claimDue(): boolean {
    const now = Date.now();
    if (now - this.lastClaimAt < Math.max(this.claimIdleMs / 4, 50)) return false;
    this.lastClaimAt = now;
    return true;
  }

  private async claimIdle(consumer: string, count: number): Promise<Delivery[]> {
    const [cursor, entries, deleted] = (await this.redis.callBuffer(
      'XAUTOCLAIM',
      this.stream,
      GROUP,
      consumer,
      this.claimIdleMs,
      this.claimCursor,
      'COUNT',
      count,
    )) as [Buffer, (BufferEntry | null)[], Buffer[]?];
    this.claimCursor = entryId(cursor);
    // Entries trimmed while pending come back as deleted ids: nothing left to deliver, acknowledge them.
    if (deleted && deleted.length > 0) await this.ack(deleted.map(entryId));
    const live = entries.filter((e): e is BufferEntry => e !== null);
    if (live.length === 0) return [];
    const counts = await this.deliveryCounts(live.map(([id]) => entryId(id)));
    return this.toDeliveries(live, (id) => counts.get(id) ?? 2);
  }

  private async deliveryCounts(ids: string[]): Promise<Map<string, number>> {
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.xpending(this.stream, GROUP, id, id, 1);
    const results = (await pipeline.exec()) ?? [];
    const counts = new Map<string, number>();
    for (const [, value] of results) {
      const row = (value as [string, string, number, number][] | undefined)?.[0];
      if (row) counts.set(row[0], Number(row[3]));
    }
    return counts;
  }

  /**
   * Checks each entry's shape; one that is not an envelope at all goes straight to the dead letters. Runs
   * for every entry read, so it allocates little beyond the delivery and awaits only for a malformed entry.
   */
  private toDeliveries(
    entries: readonly BufferEntry[],
    countOf: (id: string) => number,
  ): Promise<Delivery[]> | Delivery[] {
    const deliveries: Delivery[] = [];
    let malformed: [id: string, raw: string][] | undefined;
    for (const [rawId, fields] of entries) {
      const id = entryId(rawId);
      const text = envelopeText(fields);
      const envelope = parseEnvelope(text);
      if (envelope) deliveries.push({ id, envelope, deliveryCount: countOf(id) });
      else (malformed ??= []).push([id, text ?? '']);
    }
    return malformed ? this.deadLetterMalformed(malformed).then(() => deliveries) : deliveries;
  }

  private async deadLetterMalformed(entries: [id: string, raw: string][]): Promise<void> {
    for (const [id, raw] of entries) await this.deadLetterRaw(id, raw);
  }
}
