import { z } from 'zod';
import type { CompetitorFieldName } from '#events/competitor/fields.ts';
import { formatTime } from '../../components/format.ts';
import type { CompetitorFormValues, TheirValue } from './competitor-form.page.tsx';

const editedField = z.enum(['name', 'website', 'threat', 'headquarters']);
const conflict = z.object({
  field: editedField,
  theirs: z.string().nullable(),
  by: z.object({ id: z.string(), name: z.string() }),
  byYou: z.boolean(),
  at: z.string(),
});
/** What the competitor decider answers when an edit and a change since both changed a field. */
const editConflictDetails = z.object({
  currentVersion: z.number().int().nonnegative(),
  merged: z.record(editedField, z.string().nullable()),
  conflicts: z.array(conflict).min(1),
});

const labels: Record<z.infer<typeof editedField>, string> = {
  name: 'name',
  website: 'website',
  threat: 'threat',
  headquarters: 'headquarters',
};

/** The edit form's values, its messages, and the other value of each field both changed. */
export interface ConflictForm {
  values: CompetitorFormValues;
  errors: Partial<Record<CompetitorFieldName | '_form', string>>;
  theirs: Partial<Record<CompetitorFieldName, TheirValue>>;
}

/**
 * The edit form shown again after a real conflict (decision 0021): what the user typed where they both
 * changed a field, everyone else's changes taken in elsewhere, the version advanced so the next send goes
 * through, and each conflicting field marked with the value it meets — who wrote it, when, on the viewer's
 * clock. The segment is a board move, outside the merge (0013): one the user left as the form showed it
 * shows where the competitor is now (`segmentIdNow`), and is the form's new base, so a move since is
 * taken in too, not shown as undone. Undefined when the details are not an edit conflict's (a form naming
 * a version that never was).
 */
export function editConflictForm(
  details: unknown,
  typed: CompetitorFormValues,
  timeZone: string,
  segmentIdNow?: string,
): ConflictForm | undefined {
  const parsed = editConflictDetails.safeParse(details);
  if (!parsed.success) return undefined;
  const { currentVersion, merged, conflicts } = parsed.data;
  const values: CompetitorFormValues = { ...typed, expectedVersion: String(currentVersion) };
  if (segmentIdNow !== undefined && typed.segmentId === typed.baseSegmentId)
    Object.assign(values, { segmentId: segmentIdNow, baseSegmentId: segmentIdNow });
  for (const [field, value] of Object.entries(merged) as [keyof typeof merged, string | null][])
    values[field] = value ?? '';
  const errors: Partial<Record<CompetitorFieldName | '_form', string>> = {};
  const theirs: Partial<Record<CompetitorFieldName, TheirValue>> = {};
  for (const c of conflicts) {
    theirs[c.field] = { value: c.theirs ?? '', label: c.byYou ? 'Use that one' : 'Use theirs' };
    const when = formatTime(c.at, timeZone);
    const change = c.theirs === null ? 'cleared this' : `changed this to “${c.theirs}”`;
    errors[c.field] = c.byYou
      ? `You ${change} in another tab or window (${when}); keep this one or use that.`
      : `${c.by.name} ${change} (${when}); keep yours or use theirs.`;
  }
  errors._form = formMessage(conflicts);
  return { values, errors, theirs };
}

function formMessage(conflicts: z.infer<typeof conflict>[]): string {
  const fields = conflicts.map((c) => labels[c.field]).join(', ');
  const others = [...new Set(conflicts.filter((c) => !c.byYou).map((c) => c.by.name))];
  if (others.length === 0)
    return (
      'You changed this competitor in another tab or window after you opened this form. Your other ' +
      `changes there are taken in; where you changed a field both times (${fields}), keep this one or ` +
      'use that, then save again.'
    );
  const you = conflicts.some((c) => c.byYou) ? ['You (in another tab or window)'] : [];
  return (
    `${[...you, ...others].join(' and ')} changed this competitor after you opened this form. Their ` +
    `other changes are taken in; where you both changed a field (${fields}), keep yours or use theirs, ` +
    'then save again.'
  );
}
