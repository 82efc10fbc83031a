import type { CompetitorEvent, CompetitorNameEvent } from '#events/competitor/events.ts';
import {
  competitorFieldNames,
  pickCompetitorFields,
  type CompetitorFieldName,
} from '#events/competitor/fields.ts';
import type { Recorded } from '#events/envelope.ts';
import { cutAtCharacter } from '#events/cut-at-character.ts';
import type { OrderingEvent } from '#events/ordering/events.ts';
import type { SegmentEvent } from '#events/segment/events.ts';
import type { UserEvent } from '#events/user/events.ts';
import type { z } from 'zod';
import type {
  DeadLetterDiscarded,
  DeadLetterRetried,
  DemoDataSeeded,
  ProjectionRebuilt,
} from '#events/operations/events.ts';

export type AuditedEvent = Recorded<
  | CompetitorEvent
  | CompetitorNameEvent
  | SegmentEvent
  | OrderingEvent
  | UserEvent
  | { type: 'ProjectionRebuilt'; data: z.infer<typeof ProjectionRebuilt.schema> }
  | { type: 'DemoDataSeeded'; data: z.infer<typeof DemoDataSeeded.schema> }
  | { type: 'DeadLetterRetried'; data: z.infer<typeof DeadLetterRetried.schema> }
  | { type: 'DeadLetterDiscarded'; data: z.infer<typeof DeadLetterDiscarded.schema> }
>;

/** What the audit projection remembers of a competitor or user between events. */
export interface Subject {
  name: string;
  fields: Record<string, string | null>;
}

export interface AuditLine {
  competitorId: string | null;
  competitorName: string | null;
  summary: string;
  /** The subject as it is after this event (undefined: unchanged). */
  subject?: { id: string } & Subject;
}

const fieldLabels: Record<CompetitorFieldName, string> = {
  name: 'name',
  website: 'website',
  segmentId: 'segment',
  threat: 'threat',
  headquarters: 'headquarters',
};

const show = (v: string | null | undefined) => (v ? `“${v}”` : 'nothing');

const segmentNaming = new Set([
  'CompetitorAdded',
  'CompetitorUpdated',
  'CompetitorMovedToSegment',
  'SegmentsReordered',
]);

/** Whether the summary of an event of this type names a segment. */
export const namesSegments = (type: string): boolean => segmentNaming.has(type);

/** Segments are named by the id in events; shown by the name they were added with (never renamed). */
export type SegmentNames = (segmentId: string) => string | undefined;

/**
 * Pure: the one-line summary of an event, given what was known of its subject before it and the
 * segments' names (an id whose name is not known is shown as it is).
 */
export function auditLine(
  event: AuditedEvent,
  known: (id: string) => Subject | undefined,
  segmentNames: SegmentNames = () => undefined,
): AuditLine {
  const segment = (id: string) => segmentNames(id) ?? id;
  switch (event.type) {
    case 'CompetitorAdded': {
      const { competitorId, name, segmentId, threat } = event.data;
      const fields = pickCompetitorFields(event.data);
      return {
        competitorId,
        competitorName: name,
        summary: `Added ${name} (${segment(segmentId)}, ${threat} threat)`,
        subject: { id: competitorId, name, fields },
      };
    }
    case 'CompetitorUpdated': {
      const { competitorId, name } = event.data;
      const before = known(competitorId);
      // Only version 1 events carry a segment; a later segment change has its own line (a board move).
      const segmentId = event.data.segmentId ?? before?.fields.segmentId ?? '';
      const fields = pickCompetitorFields({ ...event.data, segmentId });
      // Compared by id; a segment is shown by its name.
      const shown = (k: CompetitorFieldName, v: string | null | undefined) =>
        show(k === 'segmentId' && v ? segment(v) : v);
      const changes = competitorFieldNames
        .filter((k) => before && before.fields[k] !== fields[k])
        .map((k) => `${fieldLabels[k]} from ${shown(k, before?.fields[k])} to ${shown(k, fields[k])}`);
      return {
        competitorId,
        competitorName: name,
        summary: changes.length ? `Changed ${changes.join(', ')}` : `Updated ${name}`,
        subject: { id: competitorId, name, fields },
      };
    }
    case 'CompetitorNoteUpdated': {
      const { competitorId, column, noteVersion, value } = event.data;
      const name = known(competitorId)?.name ?? null;
      // Cut between characters: half an emoji would be a lone surrogate, which the audit log's insert (jsonb)
      // refuses, and the projection would stop at this note for good.
      const preview = value.length > 60 ? `${cutAtCharacter(value, 60)}…` : value;
      return {
        competitorId,
        competitorName: name,
        summary: `Edited the ${column} note (version ${noteVersion}): ${preview}`,
      };
    }
    case 'CompetitorDeleted':
      return {
        competitorId: event.data.competitorId,
        competitorName: event.data.name,
        summary: `Deleted ${event.data.name}`,
      };
    case 'CompetitorNameClaimed':
      return {
        competitorId: event.data.competitorId,
        competitorName: event.data.name,
        summary: `Reserved the name ${show(event.data.name)}`,
      };
    case 'CompetitorNameReleased':
      return {
        competitorId: event.data.competitorId,
        competitorName: event.data.name,
        summary: `Released the name ${show(event.data.name)}`,
      };
    case 'SegmentAdded':
      return {
        competitorId: null,
        competitorName: null,
        summary: `Added the segment ${show(event.data.name)}`,
      };
    case 'CompetitorRankChanged':
      return {
        competitorId: event.data.competitorId,
        competitorName: event.data.name,
        summary: `Moved ${event.data.name} in the ranking from #${event.data.from} to #${event.data.to}`,
      };
    case 'CompetitorMovedToSegment':
      return {
        competitorId: event.data.competitorId,
        competitorName: event.data.name,
        summary: `Moved ${event.data.name} from the segment ${segment(event.data.fromSegmentId)} to ${segment(event.data.toSegmentId)}`,
      };
    case 'SegmentsReordered':
      return {
        competitorId: null,
        competitorName: null,
        summary: `Reordered the segments: ${event.data.moves.map((m) => `${segment(m.segmentId)} from ${m.from} to ${m.to}`).join(', ')}`,
      };
    case 'UserAdded':
      return {
        competitorId: null,
        competitorName: null,
        summary: `Added user ${event.data.displayName} <${event.data.email}> as ${event.data.role}`,
        subject: {
          id: event.data.userId,
          name: `${event.data.displayName} <${event.data.email}>`,
          fields: {},
        },
      };
    case 'UserRoleChanged':
      return {
        competitorId: null,
        competitorName: null,
        summary: `Changed the role of ${known(event.data.userId)?.name ?? 'a user'} from ${event.data.previousRole} to ${event.data.role}`,
      };
    case 'UserDisabled':
    case 'UserEnabled':
      return {
        competitorId: null,
        competitorName: null,
        summary: `${event.type === 'UserDisabled' ? 'Disabled' : 'Enabled'} ${known(event.data.userId)?.name ?? 'a user'}`,
      };
    case 'UserPasswordReset':
      return {
        competitorId: null,
        competitorName: null,
        summary: `Set a new password for ${known(event.data.userId)?.name ?? 'a user'}`,
      };
    case 'UserPasswordChanged':
      return { competitorId: null, competitorName: null, summary: 'Changed their own password' };
    case 'ProjectionRebuilt':
      return {
        competitorId: null,
        competitorName: null,
        // Only a dry run compares with the live tables: a rebuild's `differences` is 0 without meaning.
        summary: `${event.data.dryRun ? 'Dry-run rebuild of' : 'Rebuilt'} the ${event.data.projection} projection from ${event.data.events} events${event.data.dryRun ? ` (${event.data.differences} differing rows)` : ''}${event.data.resumed ? ', resuming an interrupted rebuild' : ''}`,
      };
    case 'DeadLetterRetried':
      return {
        competitorId: null,
        competitorName: null,
        summary: `Retried the dead-lettered command ${event.data.commandType ?? 'entry'} ${event.data.commandId ?? event.data.deadLetterId}`,
      };
    case 'DeadLetterDiscarded':
      return {
        competitorId: null,
        competitorName: null,
        summary: `Discarded the dead-lettered command ${event.data.commandType ?? 'entry'} ${event.data.commandId ?? event.data.deadLetterId} (${event.data.error})`,
      };
    case 'DemoDataSeeded':
      return {
        competitorId: null,
        competitorName: null,
        summary: `Seeded ${event.data.competitors} demo competitors`,
      };
  }
}
