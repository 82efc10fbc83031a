import type { Outcome } from '#events/command.ts';
import type { EventMetadata, NewEvent, Recorded } from '#events/envelope.ts';
import type { EventStore } from '#events/store/event-store.ts';
import { isRejection, reject, type Decider } from './decider.ts';
import type { StateCache } from './state-cache.ts';

export interface HandleOptions {
  /** Attempts when another writer moved the stream between our read and our append (default 12). */
  maxAttempts?: number;
  /** Folded states from earlier loads: only newer events are read. */
  cache?: StateCache;
}

/** Where commands are decided: the event store, and (in a worker) the folded states it already read. */
export interface WriteModel {
  store: EventStore;
  cache?: StateCache;
}

/** Reads a stream and folds it into state (continuing from a cached fold when there is one). */
export async function loadState<C, E extends NewEvent, S>(
  store: EventStore,
  stream: string,
  decider: Decider<C, E, S>,
  cache?: StateCache,
): Promise<{ state: S; version: number }> {
  const cached = cache?.get(decider, stream);
  const { version, events } = await store.readStream(stream, cached?.version ?? 0);
  const state = events.reduce(
    (s, e) => decider.evolve(s, e as unknown as Recorded<E>),
    cached?.state ?? decider.initialState(),
  );
  if (events.length > 0) cache?.set(decider, stream, state, version);
  return { state, version };
}

/**
 * Load → evolve → decide → append with the expected version; a lost race is retried with fresh state.
 * Every outcome, rejections included, is recorded under the command id, so a redelivered command gets
 * its first answer and appends nothing.
 */
export async function handleCommand<C, E extends NewEvent, S>(
  store: EventStore,
  stream: string,
  decider: Decider<C, E, S>,
  command: C,
  metadata: EventMetadata,
  options: HandleOptions = {},
): Promise<Outcome> {
  const { commandId } = metadata;
  const maxAttempts = options.maxAttempts ?? 12;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const { state, version } = await loadState(store, stream, decider, options.cache);
    const decision = decider.decide(command, state);
    if (isRejection(decision)) return store.recordOutcome(commandId, stream, decision);
    if (decision.events.length === 0) {
      return store.recordOutcome(commandId, stream, {
        status: 'accepted',
        positions: [],
        transactionId: '0',
        streamVersion: version,
      });
    }
    const result = await store.append(stream, decision.events, version, commandId, metadata);
    if (result.kind !== 'conflict') return result.outcome;
    // Someone else appended first: back off a little (jittered) so a crowd does not collide again.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 2 ** Math.min(attempt, 6)));
  }
  return reject('conflict', 'This item is being changed by many people at once. Please try again.');
}
