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
import type { FoldSnapshots } from '#events/store/fold-snapshots.ts';
import { orderingStream } from '#events/streams.ts';
import type { OrderingEvent } from '#events/ordering/events.ts';
import { appendDecision, backOff } from '../decide-and-append.ts';
import { reject, type Decision } from '../decider.ts';
import { decideOrdering } from './ordering.ts';
import { decideSegmentMove, type SegmentMove } from './segment-move.ts';
import { fromSnapshot, ORDERING_FOLD_VERSION, ORDERING_SNAPSHOT, toSnapshot } from './ordering-snapshot.ts';
import {
  foldOrdering,
  initialOrderingState,
  orderingSourceTypes,
  type OrderingSourceEvent,
  type OrderingState,
} from './ordering-state.ts';

const PAGE = 5_000;
const MAX_ATTEMPTS = 12;
/** A worker saves its fold after folding this many events since the last save (or load). */
export const SNAPSHOT_EVERY = 1_000;

interface Folded {
  state: OrderingState;
  checkpoint: Checkpoint;
  /** Events folded since the snapshot this fold started from (or last saved). */
  unsaved: number;
}

/**
 * The order is folded from the whole log (who is live comes from every competitor's stream), so each
 * process keeps its fold and reads only newer events, and a new process starts from the newest saved
 * snapshot (`fold_snapshots`): its first reorder reads only what was written since, not the whole log.
 * Reads are commit-safe (`readTypes`), so a fold never passes over an event that commits late, and a
 * snapshot is saved at such a checkpoint. Commands for the order run one at a time per worker (one
 * command key), so the fold is never read and advanced at once.
 */
/** What folding the order needs: the log to read and the saved folds. */
type OrderingSource = EventLogReader & FoldSnapshots;

const folds = new WeakMap<OrderingSource, Folded>();
const locks = new WeakMap<OrderingSource, Promise<unknown>>();

/** Runs `use` on the current order, one caller at a time per store (the fold is advanced in place). */
export async function withOrdering<T>(store: OrderingSource, use: (state: OrderingState) => T): Promise<T> {
  const before = locks.get(store) ?? Promise.resolve();
  const run = before.catch(() => undefined).then(async () => use(await advance(store)));
  locks.set(store, run);
  return run;
}

async function startingPoint(store: OrderingSource): Promise<Folded> {
  const snapshot = await store.loadSnapshot(ORDERING_SNAPSHOT, ORDERING_FOLD_VERSION);
  const state = snapshot && fromSnapshot(snapshot.state);
  if (snapshot && state) return { state, checkpoint: snapshot.checkpoint, unsaved: 0 };
  return { state: initialOrderingState(), checkpoint: startOfLog, unsaved: 0 };
}

async function advance(store: OrderingSource): Promise<OrderingState> {
  const folded = folds.get(store) ?? (await startingPoint(store));
  folds.set(store, folded);
  for (;;) {
    const { events, scannedTo } = await store.readTypes(folded.checkpoint, orderingSourceTypes, PAGE);
    for (const event of events) foldOrdering(folded.state, event as Recorded<OrderingSourceEvent>);
    folded.unsaved += events.length;
    const last = events.at(-1);
    if (last) folded.checkpoint = { transactionId: last.transactionId, position: last.position };
    if (events.length < PAGE) {
      // Nothing more of ours up to the settled head: start there next time.
      if (scannedTo && compareCheckpoints(scannedTo, folded.checkpoint) > 0) folded.checkpoint = scannedTo;
      if (folded.unsaved >= SNAPSHOT_EVERY) await save(store, folded);
      return folded.state;
    }
  }
}

/** A snapshot only saves time later: failing to save one is not a reason to fail the reorder. */
async function save(store: OrderingSource, folded: Folded): Promise<void> {
  try {
    await store.saveSnapshot(
      ORDERING_SNAPSHOT,
      ORDERING_FOLD_VERSION,
      folded.checkpoint,
      toSnapshot(folded.state),
    );
    folded.unsaved = 0;
  } catch {
    // Tried again after the next events are folded.
  }
}

/**
 * Decides a reorder against the current order and appends its moves to the ordering stream, expecting
 * the version it decided on: of two drops on the same version, exactly one is stored; the other is
 * decided again on the new order, where its `expect` is stale, and refused.
 */
export function decideAndAppendReorder(store: EventStore, command: OrderingCommand, metadata: EventMetadata) {
  return decideOnOrdering(store, (state) => decideOrdering(command, state), metadata);
}

/** An edit form's segment change, as a move on the board (see segment-move.ts). */
export function decideAndAppendSegmentMove(store: EventStore, move: SegmentMove, metadata: EventMetadata) {
  return decideOnOrdering(store, (state) => decideSegmentMove(move, state), metadata);
}

/** Decide on the current order → append to the ordering stream at that version; a lost race decides again. */
async function decideOnOrdering(
  store: EventStore,
  decide: (state: OrderingState) => Decision<OrderingEvent>,
  metadata: EventMetadata,
): Promise<Outcome> {
  const stream = orderingStream();
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const { decision, version } = await withOrdering(store, (state) => ({
      decision: decide(state),
      version: state.version,
    }));
    const outcome = await appendDecision(store, stream, decision, version, metadata);
    if (outcome) return outcome;
    // The fold had not seen a reorder that committed meanwhile (or is still settling): read again.
    await backOff(attempt);
  }
  return reject('conflict', 'The order is being changed by many people at once. Please try again.');
}
