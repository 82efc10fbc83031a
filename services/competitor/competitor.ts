import type {
  AddCompetitorCommand,
  DeleteCompetitorCommand,
  UpdateCompetitorCommand,
  UpdateCompetitorNoteCommand,
} from '#events/competitor/commands.ts';
import type { CompetitorEvent } from '#events/competitor/events.ts';
import {
  noteColumns,
  pickCompetitorFields as fieldsOf,
  sameCompetitorFields as sameFields,
  type CompetitorFields,
  type NoteColumn,
} from '#events/competitor/fields.ts';
import { noteConflictText } from '#events/competitor/note-conflict-text.ts';
import type { Actor } from '#events/envelope.ts';
import { assertNever } from '#infra/assert-never.ts';
import { accept, reject, type Decider, type Decision } from '../decider.ts';
import { editedFieldsOf, mergeEdit, type EditMerge, type FieldsChange } from './edit-merge.ts';

export interface NoteState {
  value: string;
  version: number;
  by: Actor | null;
  at: string | null;
}

export type CompetitorState =
  | { status: 'absent' }
  | {
      status: 'live' | 'deleted';
      competitorId: string;
      /** `segmentId` here is the one it was added with (or last set by a version 1 edit): board moves
       * live in the ordering stream, which is where the current segment is decided. */
      fields: CompetitorFields;
      version: number;
      /**
       * Every change of the fields an edit form writes, oldest first: a form opened at an older version
       * is merged with what changed since (edit-merge.ts). A note written meanwhile (which the form does
       * not show) is not among them, so it is no reason to refuse a form.
       */
      fieldChanges: FieldsChange[];
      notes: Record<NoteColumn, NoteState>;
    };

/**
 * Commands the competitor stream decides. AddCompetitor carries the segments known at the time; an edit
 * and a note update carry who sends it, so a conflict with their own save (another tab) says so.
 */
export type CompetitorStreamCommand =
  | (AddCompetitorCommand & { knownSegments: readonly string[] })
  | (UpdateCompetitorCommand & { senderId?: string })
  | (UpdateCompetitorNoteCommand & { senderId?: string })
  | DeleteCompetitorCommand;

const emptyNotes = (): Record<NoteColumn, NoteState> =>
  Object.fromEntries(noteColumns.map((c) => [c, { value: '', version: 0, by: null, at: null }])) as Record<
    NoteColumn,
    NoteState
  >;

/** The fields an edit writes to the competitor stream; the segment is a board move (the ordering stream). */
const sameEditedFields = (a: CompetitorFields, b: CompetitorFields): boolean =>
  sameFields({ ...a, segmentId: b.segmentId }, b);

export const competitorDecider: Decider<CompetitorStreamCommand, CompetitorEvent, CompetitorState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'CompetitorAdded':
        return {
          status: 'live',
          competitorId: event.data.competitorId,
          fields: fieldsOf(event.data),
          version: event.streamVersion,
          fieldChanges: [fieldsChange(event)],
          notes: emptyNotes(),
        };
      case 'CompetitorUpdated': {
        if (state.status === 'absent') return state;
        // Only version 1 events carry a segment; later segment changes live in the ordering stream.
        const segmentId = event.data.segmentId ?? state.fields.segmentId;
        const fields = fieldsOf({ ...event.data, segmentId });
        const fieldChanges = [...state.fieldChanges, fieldsChange(event)];
        return { ...state, fields, version: event.streamVersion, fieldChanges };
      }
      case 'CompetitorNoteUpdated': {
        if (state.status === 'absent') return state;
        const { column, value, noteVersion } = event.data;
        const note: NoteState = {
          value,
          version: noteVersion,
          by: event.metadata.actor,
          at: event.metadata.at,
        };
        return { ...state, notes: { ...state.notes, [column]: note }, version: event.streamVersion };
      }
      case 'CompetitorDeleted':
        if (state.status === 'absent') return state;
        return { ...state, status: 'deleted', version: event.streamVersion };
      default:
        return assertNever(event);
    }
  },

  decide(command, state): Decision<CompetitorEvent> {
    switch (command.type) {
      case 'AddCompetitor': {
        if (state.status !== 'absent') return reject('conflict', 'This competitor already exists.');
        const { knownSegments, payload } = command;
        if (!knownSegments.includes(payload.segmentId)) {
          return reject('validation', 'Choose one of the segments on the board.', {
            fields: { segmentId: 'Choose one of the segments on the board.' },
          });
        }
        return accept({
          type: 'CompetitorAdded',
          data: { ...fieldsOf(payload), competitorId: payload.competitorId },
        });
      }
      case 'UpdateCompetitor': {
        if (state.status !== 'live') return missing(state);
        const { competitorId } = command.payload;
        const merge = resolveEdit(state, command);
        if (merge.status === 'unknown-version') {
          return reject(
            'conflict',
            'This form names a version of this competitor that never was. Reload the page and make your change again.',
          );
        }
        if (merge.status === 'conflict') return editConflict(state, merge, command.senderId);
        // The segment field is not written here: a change of it is a move on the board (handlers.ts).
        const { name, website, threat, headquarters } = merge.fields;
        if (sameEditedFields({ ...state.fields, ...merge.fields }, state.fields)) return accept();
        return accept({
          type: 'CompetitorUpdated',
          data: { name, website, threat, headquarters, competitorId },
        });
      }
      case 'UpdateCompetitorNote': {
        if (state.status !== 'live') return missing(state);
        const { competitorId, column, value, expectedNoteVersion } = command.payload;
        const note = state.notes[column];
        if (expectedNoteVersion !== undefined && expectedNoteVersion !== note.version) {
          const byYou = note.by !== null && note.by.id === command.senderId;
          return reject('conflict', staleNoteMessage(note, byYou), {
            details: {
              column,
              currentValue: note.value,
              currentVersion: note.version,
              changedBy: note.by?.name ?? null,
              changedByYou: byYou,
              changedAt: note.at,
            },
          });
        }
        if (note.value === value) return accept();
        return accept({
          type: 'CompetitorNoteUpdated',
          data: { competitorId, column, value, noteVersion: note.version + 1 },
        });
      }
      case 'DeleteCompetitor':
        if (state.status === 'deleted') return accept();
        if (state.status === 'absent') return missing(state);
        return accept({
          type: 'CompetitorDeleted',
          data: { competitorId: state.competitorId, name: state.fields.name },
        });
      default:
        return assertNever(command);
    }
  },
};

function missing(state: CompetitorState) {
  return state.status === 'deleted'
    ? reject('not_found', 'This competitor was deleted.')
    : reject('not_found', 'This competitor does not exist.');
}

/** The state's fields as an event left them, with who changed them and when. */
function fieldsChange(event: {
  streamVersion: number;
  data: CompetitorFields | Omit<CompetitorFields, 'segmentId'>;
  metadata: { actor: Actor; at: string };
}): FieldsChange {
  const { name, website, threat, headquarters } = event.data;
  return {
    version: event.streamVersion,
    fields: { name, website, threat, headquarters },
    by: event.metadata.actor,
    at: event.metadata.at,
  };
}

/**
 * An edit merged with what changed since its form was opened (a form without a version, from before
 * forms carried one, is taken as it is). The command handler calls it too, to claim the name the
 * merge keeps.
 */
export function resolveEdit(
  state: Extract<CompetitorState, { status: 'live' | 'deleted' }>,
  command: UpdateCompetitorCommand,
): EditMerge {
  const mine = editedFieldsOf(command.payload);
  const { expectedVersion } = command.payload;
  if (expectedVersion === undefined) return { status: 'merged', fields: mine };
  if (expectedVersion > state.version) return { status: 'unknown-version' };
  return mergeEdit(state.fieldChanges, expectedVersion, mine);
}

/**
 * Fields both the form and someone since changed differently: refused, with what the form shows next —
 * the merge, the version to send it at, and per field whose value it meets and when. The web layer words
 * it on the viewer's clock; this message (UTC) is for logs and the command line.
 */
function editConflict(
  state: Extract<CompetitorState, { status: 'live' | 'deleted' }>,
  merge: Extract<EditMerge, { status: 'conflict' }>,
  senderId: string | undefined,
) {
  const conflicts = merge.conflicts.map((c) => ({ ...c, byYou: c.by.id === senderId }));
  const names = [...new Set(conflicts.map((c) => (c.byYou ? 'You' : c.by.name)))].join(' and ');
  const fields = conflicts.map((c) => c.field).join(', ');
  return reject(
    'conflict',
    `${names} changed ${fields} of this competitor after you opened the form. Keep yours or use theirs, then save again.`,
    { details: { currentVersion: state.version, merged: merge.fields, conflicts } },
  );
}

function staleNoteMessage(note: NoteState, byYou: boolean): string {
  const when = note.at ? `${note.at.slice(0, 16).replace('T', ' ')} UTC` : undefined;
  return noteConflictText(note.by?.name, byYou, when);
}
