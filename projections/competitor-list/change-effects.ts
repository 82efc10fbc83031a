import type { CompetitorSortColumn } from './competitor-list.queries.ts';

/**
 * What one change can do to a page of the competitor list, so a browser showing a page can tell whether
 * it needs to look again (docs/change-path.md, "Other tabs"):
 * - `list`: rows come or go, or many rows' values shift (a rank move shifts the ranks between): any page.
 * - `row`: only the changed competitor's row; it may also move under the `sorts` listed, and enter or
 *   leave a search's matches when `searchable`.
 * - `none`: nothing the list shows.
 */
export type ListEffect =
  | { scope: 'list' }
  | { scope: 'row'; sorts: readonly CompetitorSortColumn[]; searchable: boolean }
  | { scope: 'none' };

/** Every event the list projects, by what it changes (see competitor-row.ts and competitor-list.ordering.ts). */
const effects: Record<string, ListEffect> = {
  CompetitorAdded: { scope: 'list' },
  CompetitorDeleted: { scope: 'list' },
  CompetitorRankChanged: { scope: 'list' },
  CompetitorUpdated: { scope: 'row', sorts: ['name', 'segment', 'threat', 'updated'], searchable: true },
  CompetitorNoteUpdated: { scope: 'row', sorts: ['updated'], searchable: true },
  CompetitorMovedToSegment: { scope: 'row', sorts: ['segment', 'updated'], searchable: true },
  SegmentsReordered: { scope: 'none' },
};

/** An event this table does not know is assumed to change anything: a page refreshes too often, never too rarely. */
export const listEffectOf = (eventType: string): ListEffect => effects[eventType] ?? { scope: 'list' };
