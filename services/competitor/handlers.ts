import type {
  AddCompetitorCommand,
  DeleteCompetitorCommand,
  UpdateCompetitorCommand,
} from '#events/competitor/commands.ts';
import type { Outcome } from '#events/command.ts';
import type { EventMetadata } from '#events/envelope.ts';
import type { EventStore } from '#events/store/event-store.ts';
import { competitorNameStream, competitorStream, segmentsStream } from '#events/streams.ts';
import { handleCommand, loadState } from '../handle-command.ts';
import { segmentsDecider } from '../segment/segments.ts';
import { competitorDecider } from './competitor.ts';
import { competitorNameDecider } from './competitor-name.ts';

/** Sub-steps of one command get ids derived from it, so a redelivery replays each step idempotently. */
const step = (metadata: EventMetadata, name: string): EventMetadata => ({
  ...metadata,
  commandId: `${metadata.commandId}:${name}`,
});

const sameName = (a: string, b: string) => competitorNameStream(a) === competitorNameStream(b);

function claimName(store: EventStore, name: string, competitorId: string, metadata: EventMetadata) {
  return handleCommand(
    store,
    competitorNameStream(name),
    competitorNameDecider,
    { type: 'ClaimCompetitorName', name, competitorId },
    metadata,
  );
}

function releaseName(store: EventStore, name: string, competitorId: string, metadata: EventMetadata) {
  return handleCommand(
    store,
    competitorNameStream(name),
    competitorNameDecider,
    { type: 'ReleaseCompetitorName', name, competitorId },
    metadata,
  );
}

/** Claims the name, then adds; gives the name back if the add is rejected. */
export async function addCompetitor(
  store: EventStore,
  command: AddCompetitorCommand,
  metadata: EventMetadata,
): Promise<Outcome> {
  const { name, competitorId } = command.payload;
  const { state: segments } = await loadState(store, segmentsStream(), segmentsDecider);
  const claim = await claimName(store, name, competitorId, step(metadata, 'claim'));
  if (claim.status === 'rejected') return claim;
  const outcome = await handleCommand(
    store,
    competitorStream(competitorId),
    competitorDecider,
    { ...command, knownSegments: [...segments.segments.keys()] },
    metadata,
  );
  if (outcome.status === 'rejected') await releaseName(store, name, competitorId, step(metadata, 'release'));
  return outcome;
}

/** A rename claims the new name first and releases the old one after the update is stored. */
export async function updateCompetitor(
  store: EventStore,
  command: UpdateCompetitorCommand,
  metadata: EventMetadata,
): Promise<Outcome> {
  const { competitorId, name } = command.payload;
  const stream = competitorStream(competitorId);
  const { state } = await loadState(store, stream, competitorDecider);
  const oldName = state.status === 'absent' ? undefined : state.fields.name;
  const renamed = oldName !== undefined && !sameName(oldName, name);
  if (renamed && state.status === 'live') {
    const claim = await claimName(store, name, competitorId, step(metadata, 'claim'));
    if (claim.status === 'rejected') return claim;
  }
  const outcome = await handleCommand(store, stream, competitorDecider, command, metadata);
  if (renamed && state.status === 'live') {
    const [release, keep] = outcome.status === 'accepted' ? [oldName, 'old'] : [name, 'new'];
    await releaseName(store, release, competitorId, step(metadata, `release-${keep}`));
  }
  return outcome;
}

export async function deleteCompetitor(
  store: EventStore,
  command: DeleteCompetitorCommand,
  metadata: EventMetadata,
): Promise<Outcome> {
  const { competitorId } = command.payload;
  const stream = competitorStream(competitorId);
  const outcome = await handleCommand(store, stream, competitorDecider, command, metadata);
  if (outcome.status === 'accepted') {
    const { state } = await loadState(store, stream, competitorDecider);
    if (state.status !== 'absent') {
      await releaseName(store, state.fields.name, competitorId, step(metadata, 'release'));
    }
  }
  return outcome;
}
