import type { Redis } from 'ioredis';
import type { BusEnvelope } from '../command-shape.ts';
import type { DeadLetterSink } from '../store/dead-letters.ts';
import type { BusOptions, CommandBus, Delivery, ReadOptions } from './command-bus.ts';
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

/** An old letter's attempts as an integer column holds them; 0 when the field is broken or missing. */
const attempts = (text: string | undefined) => (text && /^\d{1,9}$/.test(text) ? Number(text) : 0);

/** Deletes the moved entries from the earlier version's dead-letter stream, and the stream once empty. */
const DROP_MOVED_SCRIPT = `
redis.call('XDEL', KEYS[1], unpack(ARGV))
if redis.call('XLEN', KEYS[1]) == 0 then redis.call('DEL', KEYS[1]) end
return 1`;

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
 * XACK, XAUTOCLAIM for entries a crashed consumer left, MINID trimming below the
 * oldest pending entry, and recreation of the group if Redis lost it (NOGROUP).
 */
export class RedisCommandBus implements CommandBus {
  private readonly stream: string;
  /** Where an earlier version kept its dead letters (see `adoptOldDeadLetters`). */
  private readonly oldDeadStream: string;
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
    private readonly letters: DeadLetterSink,
    options: BusOptions = {},
  ) {
    this.stream = `${prefix}commands`;
    this.oldDeadStream = `${prefix}commands:dead`;
    this.claimIdleMs = options.claimIdleMs ?? 30_000;
    this.consumerIdleMs = options.consumerIdleMs ?? 3_600_000;
  }

  /**
   * Fails at once while Redis is away. Queued instead (ioredis's offline queue has no bound), every
   * command of an outage was held in memory — 3.7 kB a note save, 10 MB a minute at 35 saves/s — and all
   * were sent, stale, when Redis came back. A command is in the inbox before it is sent, so a failed
   * send loses nothing: the inbox sweeper sends it again once the bus answers.
   */
  async send(envelope: BusEnvelope): Promise<string> {
    if (this.redis.status !== 'ready')
      throw new Error(`the command bus is unreachable (${this.redis.status})`);
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
    const { id: busEntryId, envelope, deliveryCount } = delivery;
    await this.letters.add({ busEntryId, envelope, error, deliveryCount });
    await this.ack([busEntryId]);
  }

  /**
   * The entry's text is read back from the stream (it stays there while pending) rather than kept for every
   * delivery: a command that fails its full parse is rare, a delivery is not.
   */
  async deadLetterInvalid(delivery: Delivery): Promise<void> {
    const [entry] = (await this.redis.xrange(this.stream, delivery.id, delivery.id)) as StreamEntry[];
    const raw = entry ? field(entry[1], 'envelope') : undefined;
    await this.deadLetterRaw(
      delivery.id,
      raw ?? JSON.stringify(delivery.envelope),
      delivery.envelope.commandId,
    );
  }

  /** An entry that is not a command at all (or fails its full parse): kept as it came, with why. */
  private async deadLetterRaw(busEntryId: string, raw: string, commandId?: string): Promise<void> {
    await this.letters.add({
      busEntryId,
      envelope: null,
      raw,
      error: 'not a valid command envelope',
      deliveryCount: 1,
      ...(commandId === undefined ? {} : { commandId }),
    });
    await this.ack([busEntryId]);
  }

  /**
   * Moves the dead letters an earlier version kept on Redis (a stream beside the commands) into the
   * database, a page at a time, deleting from that stream only the entries moved (and the stream once it
   * is empty): an instance still on the earlier version may add more meanwhile (a rolling upgrade), and
   * those must stay for the next move. Adding one twice is harmless, so a crash midway loses none.
   */
  async adoptOldDeadLetters(): Promise<number> {
    let moved = 0;
    for (;;) {
      const entries = (await this.redis.xrange(this.oldDeadStream, '-', '+', 'COUNT', 100)) as StreamEntry[];
      if (entries.length === 0) return moved;
      for (const [, fields] of entries) {
        const text = field(fields, 'envelope');
        const envelope = parseEnvelope(text) ?? null;
        await this.letters.add({
          busEntryId: field(fields, 'id') ?? '',
          envelope,
          raw: envelope ? undefined : (field(fields, 'raw') ?? text ?? ''),
          error: field(fields, 'error') ?? '',
          deliveryCount: attempts(field(fields, 'deliveryCount')),
        });
      }
      await this.redis.eval(DROP_MOVED_SCRIPT, 1, this.oldDeadStream, ...entries.map(([id]) => id));
      moved += entries.length;
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
   * Moves what an earlier version still puts in its dead-letter stream (see `adoptOldDeadLetters`), then
   * trims below both the first entry not yet delivered (read first) and the oldest pending entry (read
   * second). Entries delivered between the two reads are above the first bound, so none can be lost.
   */
  async trim(): Promise<void> {
    // During a rolling upgrade, instances on the earlier version still keep their dead letters on Redis
    // after this one started: moved as they come, not only at the next start. One that cannot be moved
    // now (the database does not answer) stays there for the next trim.
    await this.adoptOldDeadLetters().catch(() => undefined);
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

  /**
   * One that cannot be recorded (the database is down) stays pending, not acknowledged: it is claimed
   * again after the idle time and recorded then. The entries read with it are delivered meanwhile.
   */
  private async deadLetterMalformed(entries: [id: string, raw: string][]): Promise<void> {
    for (const [id, raw] of entries) await this.deadLetterRaw(id, raw).catch(() => undefined);
  }
}
