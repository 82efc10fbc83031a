import type {
  AddCompetitorCommand,
  DeleteCompetitorCommand,
  UpdateCompetitorCommand,
} from '#events/competitor/commands.ts';
import type { Outcome } from '#events/command.ts';
import type { EventMetadata } from '#events/envelope.ts';
import { competitorNameStream, competitorStream, segmentsStream } from '#events/streams.ts';
import { decideAndAppend, loadState, type WriteModel } from '../decide-and-append.ts';
import { segmentsDecider } from '../segment/segments.ts';
import { competitorDecider } from './competitor.ts';
import { competitorNameDecider } from './competitor-name.ts';

/** Sub-steps of one command get ids derived from it, so a redelivery replays each step idempotently. */
const step = (metadata: EventMetadata, name: string): EventMetadata => ({
  ...metadata,
  commandId: `${metadata.commandId}:${name}`,
});

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

/** Claims the name, then adds; gives the name back if the add is rejected. */
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
  if (outcome.status === 'rejected') await releaseName(w, name, competitorId, step(metadata, 'release'));
  return outcome;
}

/** A rename claims the new name first and releases the old one after the update is stored. */
export async function updateCompetitor(
  w: WriteModel,
  command: UpdateCompetitorCommand,
  metadata: EventMetadata,
): Promise<Outcome> {
  const { competitorId, name } = command.payload;
  const stream = competitorStream(competitorId);
  const { state } = await loadState(w.store, stream, competitorDecider, w.cache);
  const oldName = state.status === 'absent' ? undefined : state.fields.name;
  const renamed = oldName !== undefined && !sameName(oldName, name);
  if (renamed && state.status === 'live') {
    const claim = await claimName(w, name, competitorId, step(metadata, 'claim'));
    if (claim.status === 'rejected') return claim;
  }
  const outcome = await decideAndAppend(w, stream, competitorDecider, command, metadata);
  if (renamed && state.status === 'live') {
    const [release, keep] = outcome.status === 'accepted' ? [oldName, 'old'] : [name, 'new'];
    await releaseName(w, release, competitorId, step(metadata, `release-${keep}`));
  }
  return outcome;
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
