import type { Outcome } from '#events/command.ts';
import {
  compareCheckpoints,
  startOfLog,
  type Checkpoint,
  type EventMetadata,
  type Recorded,
} from '#events/envelope.ts';
import type { OrderingCommand } from '#events/ordering/commands.ts';
import type { EventLogReader } from '#events/store/event-log-reader.ts';
import type { EventStore } from '#events/store/event-store.ts';
import { orderingStream } from '#events/streams.ts';
import { appendDecision, backOff } from '../decide-and-append.ts';
import { reject } from '../decider.ts';
import { decideOrdering } from './ordering.ts';
import {
  foldOrdering,
  initialOrderingState,
  orderingSourceTypes,
  type OrderingSourceEvent,
  type OrderingState,
} from './ordering-state.ts';

const PAGE = 5_000;
const MAX_ATTEMPTS = 12;

interface Folded {
  state: OrderingState;
  checkpoint: Checkpoint;
}

/**
 * The order is folded from the whole log (who is live comes from every competitor's stream), so each
 * process keeps its fold and reads only newer events. Reads are commit-safe (`readTypes`), so a fold
 * never passes over an event that commits late. Commands for the order run one at a time per worker
 * (one command key), so the fold is never read and advanced at once.
 */
const folds = new WeakMap<EventLogReader, Folded>();
const locks = new WeakMap<EventLogReader, Promise<unknown>>();

/** Runs `use` on the current order, one caller at a time per store (the fold is advanced in place). */
export async function withOrdering<T>(store: EventLogReader, use: (state: OrderingState) => T): Promise<T> {
  const before = locks.get(store) ?? Promise.resolve();
  const run = before.catch(() => undefined).then(async () => use(await advance(store)));
  locks.set(store, run);
  return run;
}

async function advance(store: EventLogReader): Promise<OrderingState> {
  const folded = folds.get(store) ?? { state: initialOrderingState(), checkpoint: startOfLog };
  folds.set(store, folded);
  for (;;) {
    const { events, scannedTo } = await store.readTypes(folded.checkpoint, orderingSourceTypes, PAGE);
    for (const event of events) foldOrdering(folded.state, event as Recorded<OrderingSourceEvent>);
    const last = events.at(-1);
    if (last) folded.checkpoint = { transactionId: last.transactionId, position: last.position };
    if (events.length < PAGE) {
      // Nothing more of ours up to the settled head: start there next time.
      if (scannedTo && compareCheckpoints(scannedTo, folded.checkpoint) > 0) folded.checkpoint = scannedTo;
      return folded.state;
    }
  }
}

/**
 * Decides a reorder against the current order and appends its moves to the ordering stream, expecting
 * the version it decided on: of two drops on the same version, exactly one is stored; the other is
 * decided again on the new order, where its `expect` is stale, and refused.
 */
export async function decideAndAppendReorder(
  store: EventStore,
  command: OrderingCommand,
  metadata: EventMetadata,
): Promise<Outcome> {
  const stream = orderingStream();
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const { decision, version } = await withOrdering(store, (state) => ({
      decision: decideOrdering(command, state),
      version: state.version,
    }));
    const outcome = await appendDecision(store, stream, decision, version, metadata);
    if (outcome) return outcome;
    // The fold had not seen a reorder that committed meanwhile (or is still settling): read again.
    await backOff(attempt);
  }
  return reject('conflict', 'The order is being changed by many people at once. Please try again.');
}
