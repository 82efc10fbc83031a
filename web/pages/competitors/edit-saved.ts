import { competitorFieldNames, type CompetitorFields } from '#events/competitor/fields.ts';
import type { CompetitorRow } from '#projections/competitor-list/competitor-row.ts';

const labels: Record<keyof CompetitorFields, string> = {
  name: 'name',
  website: 'website',
  segmentId: 'segment',
  threat: 'threat',
  headquarters: 'headquarters',
};

/**
 * The notice after an edit form was saved. A form opened before someone else's change is merged into
 * it (decision 0021): the competitor as stored then differs from what the form sent where the other
 * change was kept, and the notice says so — else the user believes the card shows only what they typed
 * (and "Acme was saved." named the old name when the other change was a rename). `stored` is the
 * competitor as the list shows it; read at another version than this save left (a later change came
 * in between), it cannot tell what the merge kept, and the notice names only what was sent.
 */
export function editSavedMessage(
  sent: CompetitorFields,
  stored: CompetitorRow | undefined,
  savedVersion: number,
): string {
  if (!stored || stored.version !== savedVersion) return `${sent.name} was saved.`;
  const kept = competitorFieldNames
    .filter((field) => stored[field] !== sent[field])
    .map((field) => {
      if (field === 'segmentId') return `segment “${stored.segmentName}”`;
      const value = stored[field];
      return value === null ? `${labels[field]} cleared` : `${labels[field]} “${value}”`;
    });
  if (kept.length === 0) return `${stored.name} was saved.`;
  return `${stored.name} was saved, with the changes made since you opened the form kept (${kept.join(', ')}).`;
}
