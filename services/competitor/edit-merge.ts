import type { CompetitorFields } from '#events/competitor/fields.ts';
import type { Actor } from '#events/envelope.ts';

/** The fields an edit form writes to the competitor stream; the segment is a board move (decision 0013). */
export const editedFieldNames = ['name', 'website', 'threat', 'headquarters'] as const;
export type EditedFieldName = (typeof editedFieldNames)[number];
export type EditedFields = Pick<CompetitorFields, EditedFieldName>;

/** The competitor's fields as one event left them: an add, or an edit of them. */
export interface FieldsChange {
  version: number;
  fields: EditedFields;
  by: Actor;
  at: string;
}

/** A field both the form and someone since changed, to different values: theirs, and who wrote it when. */
export interface FieldConflict {
  field: EditedFieldName;
  theirs: string | null;
  by: Actor;
  at: string;
}

export type EditMerge =
  | { status: 'merged'; fields: EditedFields }
  | { status: 'conflict'; fields: EditedFields; conflicts: FieldConflict[] }
  | { status: 'unknown-version' };

export const editedFieldsOf = (fields: EditedFields): EditedFields => ({
  name: fields.name,
  website: fields.website,
  threat: fields.threat,
  headquarters: fields.headquarters,
});

/**
 * A three-way merge of an edit form with what happened since it was opened. `history` is every change
 * of the fields, oldest first; the base is the fields as they stood at `openedAt` (the stream version
 * the form was rendered at), known exactly from the log. A field only the form changed keeps the form's
 * value, one only others changed takes theirs, and one both changed to different values is a conflict
 * (`fields` then holds the form's value there, the merge elsewhere). Pure: the decider and the command
 * handler (which claims a new name before deciding) both call it.
 */
export function mergeEdit(history: readonly FieldsChange[], openedAt: number, mine: EditedFields): EditMerge {
  const baseIndex = history.findLastIndex((change) => change.version <= openedAt);
  const base = history[baseIndex];
  const current = history.at(-1);
  if (!base || !current) return { status: 'unknown-version' };
  const fields = { ...mine };
  const conflicts: FieldConflict[] = [];
  for (const field of editedFieldNames) {
    const theirs = current.fields[field];
    if (theirs === base.fields[field] || theirs === mine[field]) continue;
    if (mine[field] === base.fields[field]) {
      setField(fields, field, theirs);
      continue;
    }
    const last = lastChangeOf(history, baseIndex, field);
    conflicts.push({ field, theirs, by: last.by, at: last.at });
  }
  return conflicts.length ? { status: 'conflict', fields, conflicts } : { status: 'merged', fields };
}

function setField<F extends EditedFieldName>(fields: EditedFields, field: F, value: EditedFields[F]) {
  fields[field] = value;
}

/** The latest change after the base that gave `field` a new value (there is one: it differs from the base). */
function lastChangeOf(history: readonly FieldsChange[], baseIndex: number, field: EditedFieldName) {
  for (let i = history.length - 1; i > baseIndex; i--) {
    const change = history[i]!;
    if (change.fields[field] !== history[i - 1]!.fields[field]) return change;
  }
  return history.at(-1)!;
}
