import type { ListEffect } from '#projections/competitor-list/change-effects.ts';

/** What a competitor table on screen shows: enough to tell whether a change can alter it. */
export interface ShownPage {
  /** `column:direction`, or empty for the natural order (by rank). */
  sort: string;
  search: string;
  rowIds: ReadonlySet<string>;
}

export interface ListChange {
  competitorId: string | null;
  effect: ListEffect;
}

/**
 * True when the change can alter the page: it changes the list as a whole, or a row on the page, or a
 * row that may move into or out of this page under its sort or search. Pure; shared by the browser and
 * the live-refresh benchmark.
 */
export function affectsPage(change: ListChange, page: ShownPage): boolean {
  const { effect } = change;
  if (effect.scope === 'none') return false;
  if (effect.scope === 'list' || change.competitorId === null) return true;
  if (page.rowIds.has(change.competitorId)) return true;
  if (page.search !== '' && effect.searchable) return true;
  const column = page.sort.split(':')[0] || 'rank';
  return (effect.sorts as readonly string[]).includes(column);
}
