import { z } from 'zod';
import { noteConflictText } from '#events/competitor/note-conflict-text.ts';
import { formatTime } from './format.ts';

/** What the competitor decider says of a note saved since the dialog opened (services/competitor). */
const noteConflictDetails = z.object({
  changedBy: z.string().nullable(),
  changedByYou: z.boolean(),
  changedAt: z.string().nullable(),
});

/**
 * The notes dialog's conflict message on the viewer's clock (decision 0019): the decider, which knows no
 * viewer, writes its own in UTC for logs. Undefined when the details are not a note conflict's.
 */
export function noteConflictMessage(details: unknown, timeZone: string): string | undefined {
  const parsed = noteConflictDetails.safeParse(details);
  if (!parsed.success) return undefined;
  const { changedBy, changedByYou, changedAt } = parsed.data;
  return noteConflictText(
    changedBy ?? undefined,
    changedByYou,
    changedAt ? formatTime(changedAt, timeZone) : undefined,
  );
}
