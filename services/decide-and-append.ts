import type { Outcome } from '#events/command.ts';
import type { EventMetadata, NewEvent, Recorded } from '#events/envelope.ts';
import type { EventStore } from '#events/store/event-store.ts';
import { isRejection, reject, type Decider, type Decision } from './decider.ts';
import type { StateCache } from './state-cache.ts';

export interface DecideAndAppendOptions {
  /** Attempts when another writer moved the stream between our read and our append (default 12). */
  maxAttempts?: number;
}

/** Where commands are decided: the event store, and (in a worker) the folded states it already read. */
export interface WriteModel {
  store: EventStore;
  /** Folded states from earlier loads: only newer events are read. */
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
export async function decideAndAppend<C, E extends NewEvent, S>(
  w: WriteModel,
  stream: string,
  decider: Decider<C, E, S>,
  command: C,
  metadata: EventMetadata,
  options: DecideAndAppendOptions = {},
): Promise<Outcome> {
  const maxAttempts = options.maxAttempts ?? 12;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const { state, version } = await loadState(w.store, stream, decider, w.cache);
    const outcome = await appendDecision(w.store, stream, decider.decide(command, state), version, metadata);
    if (outcome) return outcome;
    await backOff(attempt);
  }
  return reject('conflict', 'This item is being changed by many people at once. Please try again.');
}

/**
 * Stores a decision taken on `version` of the stream: a rejection or a no-op is recorded as the
 * command's outcome, events are appended expecting that version. Undefined when another writer moved
 * the stream first (decide again on fresh state).
 */
export async function appendDecision<E extends NewEvent>(
  store: EventStore,
  stream: string,
  decision: Decision<E>,
  version: number,
  metadata: EventMetadata,
): Promise<Outcome | undefined> {
  const { commandId } = metadata;
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
  return result.kind === 'conflict' ? undefined : result.outcome;
}

/** After a lost race: wait a little (jittered, growing) so a crowd of writers does not collide again. */
export const backOff = (attempt: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * 2 ** Math.min(attempt, 6)));
