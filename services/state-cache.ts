import type { NewEvent } from '#events/envelope.ts';
import type { Decider } from './decider.ts';

interface Entry {
  state: unknown;
  version: number;
}

/**
 * Folded aggregate states kept in memory, so loading a long stream reads only the events after the
 * version already folded (events never change, so a cached fold is never wrong, only behind). Bounded,
 * least recently used first out. One per worker process.
 */
export class StateCache {
  private readonly entries = new Map<string, Entry>();
  private readonly deciderIds = new WeakMap<object, number>();
  private nextId = 1;

  constructor(private readonly maxEntries = 2_000) {}

  get<C, E extends NewEvent, S>(
    decider: Decider<C, E, S>,
    stream: string,
  ): { state: S; version: number } | undefined {
    const key = this.key(decider, stream);
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry as { state: S; version: number };
  }

  set<C, E extends NewEvent, S>(decider: Decider<C, E, S>, stream: string, state: S, version: number): void {
    const key = this.key(decider, stream);
    this.entries.delete(key);
    this.entries.set(key, { state, version });
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  private key(decider: object, stream: string): string {
    let id = this.deciderIds.get(decider);
    if (id === undefined) {
      id = this.nextId++;
      this.deciderIds.set(decider, id);
    }
    return `${id}:${stream}`;
  }
}
