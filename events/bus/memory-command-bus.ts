import { checkEnvelopeShape, type BusEnvelope } from '../command-shape.ts';
import type { DeadLetterSink } from '../store/dead-letters.ts';
import type { BusOptions, CommandBus, Delivery, ReadOptions } from './command-bus.ts';

interface PendingEntry {
  consumer: string;
  deliveredAt: number;
  deliveryCount: number;
}

/**
 * The embedded bus: the same semantics as the Redis Streams bus, in one process. Entries stay until
 * acknowledged; an entry idle too long in a consumer's hands is redelivered to the next reader.
 * Envelopes are copied through JSON so a consumer never shares objects with the sender.
 */
export class MemoryCommandBus implements CommandBus {
  private readonly log = new Map<string, string>();
  private readonly pending = new Map<string, PendingEntry>();
  private nextId = 1;
  /** Highest id handed to any consumer; later ids are undelivered. */
  private lastDelivered = 0;
  private waiters = new Set<() => void>();
  private closed = false;
  private readonly claimIdleMs: number;

  /** @param letters where given-up entries go (the database's dead letters) */
  constructor(
    private readonly letters: DeadLetterSink,
    options: BusOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    this.claimIdleMs = options.claimIdleMs ?? 30_000;
  }

  async send(envelope: BusEnvelope): Promise<string> {
    const id = String(this.nextId++);
    this.log.set(id, JSON.stringify(envelope));
    for (const wake of this.waiters) wake();
    return id;
  }

  async read(consumer: string, options: ReadOptions = {}): Promise<Delivery[]> {
    const count = options.count ?? 100;
    const deadline = this.now() + (options.blockMs ?? 2_000);
    for (;;) {
      const deliveries = [...this.claimIdle(consumer, count)];
      deliveries.push(...this.takeNew(consumer, count - deliveries.length));
      if (deliveries.length > 0 || this.closed) return deliveries;
      const remaining = deadline - this.now();
      if (remaining <= 0) return [];
      await this.waitForSend(Math.min(remaining, this.claimIdleMs));
    }
  }

  async ack(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      if (this.pending.delete(id)) this.log.delete(id);
    }
  }

  async deadLetter(delivery: Delivery, error: string): Promise<void> {
    const { id: busEntryId, envelope, deliveryCount } = delivery;
    await this.letters.add({ busEntryId, envelope, error, deliveryCount });
    await this.ack([busEntryId]);
  }

  async deadLetterInvalid(delivery: Delivery): Promise<void> {
    await this.letters.add({
      busEntryId: delivery.id,
      envelope: null,
      raw: this.log.get(delivery.id) ?? JSON.stringify(delivery.envelope),
      error: 'not a valid command envelope',
      deliveryCount: 1,
      commandId: delivery.envelope.commandId,
    });
    await this.ack([delivery.id]);
  }

  async pendingCount(): Promise<number> {
    return this.pending.size;
  }

  async trim(): Promise<void> {
    // Acknowledged entries are dropped at once; nothing else to do.
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const wake of this.waiters) wake();
  }

  private *claimIdle(consumer: string, count: number): Generator<Delivery> {
    let claimed = 0;
    const now = this.now();
    for (const [id, entry] of this.pending) {
      if (claimed >= count) return;
      if (now - entry.deliveredAt < this.claimIdleMs) continue;
      entry.consumer = consumer;
      entry.deliveredAt = now;
      entry.deliveryCount += 1;
      claimed++;
      yield this.delivery(id, entry.deliveryCount);
    }
  }

  private takeNew(consumer: string, count: number): Delivery[] {
    const deliveries: Delivery[] = [];
    while (deliveries.length < count && this.lastDelivered + 1 < this.nextId) {
      const id = String(++this.lastDelivered);
      if (!this.log.has(id)) continue;
      this.pending.set(id, { consumer, deliveredAt: this.now(), deliveryCount: 1 });
      deliveries.push(this.delivery(id, 1));
    }
    return deliveries;
  }

  private delivery(id: string, deliveryCount: number): Delivery {
    const raw = this.log.get(id);
    if (raw === undefined) throw new Error(`bus entry ${id} vanished`);
    // Only `send` writes here, so the shape always holds; the command is parsed where it is decided.
    const envelope = checkEnvelopeShape(JSON.parse(raw));
    if (!envelope) throw new Error(`bus entry ${id} is not a command envelope`);
    return { id, envelope, deliveryCount };
  }

  private waitForSend(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.waiters.add(wake);
    });
  }
}
