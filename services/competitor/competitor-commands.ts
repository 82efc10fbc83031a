import type {
  AddCompetitorCommand,
  DeleteCompetitorCommand,
  UpdateCompetitorCommand,
} from '#events/competitor/commands.ts';
import type { Outcome } from '#events/command.ts';
import type { EventMetadata } from '#events/envelope.ts';
import { competitorNameStream, competitorStream, segmentsStream } from '#events/streams.ts';
import { decideAndAppend, loadState, type WriteModel } from '../decide-and-append.ts';
import { reject } from '../decider.ts';
import { decideAndAppendSegmentMove, withOrdering } from '../ordering/reorder.ts';
import { segmentsDecider } from '../segment/segments.ts';
import { competitorDecider, resolveEdit, type CompetitorState } from './competitor.ts';
import { competitorNameDecider } from './competitor-name.ts';

/** Sub-steps of one command get ids derived from it, so a redelivery replays each step idempotently. */
const step = (metadata: EventMetadata, name: string): EventMetadata => ({
  ...metadata,
  commandId: `${metadata.commandId}:${name}`,
});

/**
 * Whether a command has begun: its decision or its first step (the name claim, the only step taken
 * before the decision) is recorded. A command that has begun is finished on redelivery, whatever
 * happened since; its later steps (releases, the segment move) are idempotent.
 */
export async function hasBegun(w: WriteModel, commandId: string): Promise<boolean> {
  const recorded = await Promise.all([commandId, `${commandId}:claim`].map((id) => w.store.findOutcome(id)));
  return recorded.some((outcome) => outcome !== undefined);
}

const sameName = (a: string, b: string) => competitorNameStream(a) === competitorNameStream(b);

function claimName(w: WriteModel, name: string, competitorId: string, metadata: EventMetadata) {
  return decideAndAppend(
    w,
    competitorNameStream(name),
    competitorNameDecider,
    { type: 'ClaimCompetitorName', name, competitorId },
    metadata,
  );
}

function releaseName(w: WriteModel, name: string, competitorId: string, metadata: EventMetadata) {
  return decideAndAppend(
    w,
    competitorNameStream(name),
    competitorNameDecider,
    { type: 'ReleaseCompetitorName', name, competitorId },
    metadata,
  );
}

/**
 * Claims the name, then adds; gives the name back if the add is rejected — only a claim this command
 * made: an id that already holds the name is a competitor that exists (a key naming it), and keeps it.
 */
export async function addCompetitor(
  w: WriteModel,
  command: AddCompetitorCommand,
  metadata: EventMetadata,
): Promise<Outcome> {
  const { name, competitorId } = command.payload;
  const { state: segments } = await loadState(w.store, segmentsStream(), segmentsDecider, w.cache);
  const claim = await claimName(w, name, competitorId, step(metadata, 'claim'));
  if (claim.status === 'rejected') return claim;
  const outcome = await decideAndAppend(
    w,
    competitorStream(competitorId),
    competitorDecider,
    { ...command, knownSegments: [...segments.segments.keys()] },
    metadata,
  );
  const claimed = claim.positions.length > 0;
  // Not a name the competitor bears now: a rename of it to this name may hold it through our claim.
  if (outcome.status === 'rejected' && claimed && !(await bearsName(w, competitorId, name)))
    await releaseName(w, name, competitorId, step(metadata, 'release'));
  return outcome;
}

/**
 * An edit from a form opened before someone else's save is merged with it first (decision 0021): the
 * name the merge keeps is the one claimed. A rename claims the new name first and releases the old one
 * after the update is stored. The segment is not an edited field: if the user changed it from what the
 * form showed, it becomes a move on the board after the update, so an edit form opened before a board
 * move cannot undo it (decision 0013).
 */
export async function updateCompetitor(
  w: WriteModel,
  sent: UpdateCompetitorCommand,
  metadata: EventMetadata,
): Promise<Outcome> {
  const { competitorId, segmentId, baseSegmentId } = sent.payload;
  const stream = competitorStream(competitorId);
  const { state } = await loadState(w.store, stream, competitorDecider, w.cache);
  const { command: merged, name } = mergedNow(state, sent);
  const command = { ...merged, senderId: metadata.actor.id };
  const oldName = state.status === 'absent' ? undefined : state.fields.name;
  // A form without the segment it showed (rendered before forms carried it) is compared with the
  // segment the competitor stream knows, which a board move does not change: an untouched field stays.
  const shown = baseSegmentId ?? (state.status === 'absent' ? undefined : state.fields.segmentId);
  const moveTo = segmentId !== shown ? segmentId : undefined;
  if (moveTo !== undefined && !(await withOrdering(w.store, (s) => s.segmentNames.has(moveTo)))) {
    const message = 'Choose one of the segments on the board.';
    return reject('validation', message, { fields: { segmentId: message } });
  }
  const renamed = oldName !== undefined && !sameName(oldName, name);
  if (renamed && state.status === 'live') {
    const claim = await claimName(w, name, competitorId, step(metadata, 'claim'));
    if (claim.status === 'rejected') return claim;
  }
  const outcome = await decideAndAppend(w, stream, competitorDecider, command, metadata);
  if (renamed && state.status === 'live') {
    if (outcome.status === 'accepted') {
      await releaseName(w, oldName, competitorId, step(metadata, 'release-old'));
    } else if (!(await bearsName(w, competitorId, name))) {
      // A claim is the competitor's, not this command's: another rename to the same name (decided by
      // another worker) may hold it through ours and have been stored, and then the name stays taken.
      await releaseName(w, name, competitorId, step(metadata, 'release-new'));
    }
  }
  if (outcome.status === 'rejected' || moveTo === undefined) return outcome;
  const moved = await decideAndAppendSegmentMove(
    w.store,
    { competitorId, toSegmentId: moveTo },
    step(metadata, 'segment'),
  );
  return bothApplied(outcome, moved);
}

/**
 * The edit merged with the fields as they are now, sent at this version; a conflict, or a form that names
 * a version that never was, is left for the decider to refuse. Should another edit be stored before this
 * one, the decider merges again from this version (its fields are known exactly). `name` is the one to
 * claim: the merge's, also in a conflict, so a name only someone else changed since is not claimed back
 * (that refused the form as "already exists" when a new competitor had taken the old name meanwhile).
 */
function mergedNow(
  state: CompetitorState,
  command: UpdateCompetitorCommand,
): { command: UpdateCompetitorCommand; name: string } {
  const sent = { command, name: command.payload.name };
  if (state.status !== 'live') return sent;
  const merge = resolveEdit(state, command);
  if (merge.status === 'unknown-version') return sent;
  if (merge.status === 'conflict') return { command, name: merge.fields.name };
  const payload = { ...command.payload, ...merge.fields, expectedVersion: state.version };
  return { command: { ...command, payload }, name: payload.name };
}

/** Whether the competitor is live and named `name` now (as names compare). */
async function bearsName(w: WriteModel, competitorId: string, name: string): Promise<boolean> {
  const { state } = await loadState(w.store, competitorStream(competitorId), competitorDecider, w.cache);
  return state.status === 'live' && sameName(state.fields.name, name);
}

/** The answer for an update and the move after it: the later one's position is what a reader waits for. */
function bothApplied(update: Outcome, move: Outcome): Outcome {
  if (update.status === 'rejected' || move.status === 'rejected' || move.positions.length === 0)
    return move.status === 'rejected' ? move : update;
  return {
    ...update,
    positions: [...update.positions, ...move.positions],
    transactionId: move.transactionId,
  };
}

export async function deleteCompetitor(
  w: WriteModel,
  command: DeleteCompetitorCommand,
  metadata: EventMetadata,
): Promise<Outcome> {
  const { competitorId } = command.payload;
  const stream = competitorStream(competitorId);
  const outcome = await decideAndAppend(w, stream, competitorDecider, command, metadata);
  if (outcome.status === 'accepted') {
    const { state } = await loadState(w.store, stream, competitorDecider, w.cache);
    if (state.status !== 'absent') {
      await releaseName(w, state.fields.name, competitorId, step(metadata, 'release'));
    }
  }
  return outcome;
}
