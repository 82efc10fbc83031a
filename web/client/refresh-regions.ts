import { BACKGROUND_HEADER } from '../background-request.ts';
import { affectsPage, type ListChange, type ShownPage } from '../realtime/affects-table.ts';
import type { ComponentAnswer } from './component-call.ts';
import { tableController, type DataTableController } from './data-table.ts';
import { replaceKeepingFocus } from './keep-focus.ts';
import { wantEcho } from './own-changes.ts';
import { hasSortables, refreshSortables } from './sortable-lists.ts';

/** A refresh is the page's own doing (a change elsewhere), not the person's: not activity. */
const xhrHeaders = { 'X-Requested-With': 'XMLHttpRequest', [BACKGROUND_HEADER]: '1' };

/** What to look at again: everything (the page may have missed something), or what these changes touch. */
export type RefreshScope = 'all' | readonly ListChange[];

/** The competitor table's page as shown: its sort and search, and the rows on it. */
const shownPage = (root: HTMLElement, table: DataTableController): ShownPage => ({
  sort: table.current.sort,
  search: table.current.search,
  rowIds: new Set([...root.querySelectorAll<HTMLElement>('[data-row-id]')].map((r) => r.dataset.rowId ?? '')),
});

/**
 * The regions of one competitor's page (the battlecard and its heading, the note history): each names its
 * competitor in `data-live-competitor`; `data-live-list` marks one that list-wide changes alter too (a rank).
 */
const competitorRegions = () => [...document.querySelectorAll<HTMLElement>('[data-live-competitor]')];

const altersRegion = (change: ListChange, region: HTMLElement): boolean =>
  change.competitorId === region.dataset.liveCompetitor ||
  (change.effect.scope === 'list' && region.dataset.liveList !== undefined);

/** The regions of this page that `scope` can alter (docs/change-path.md, "Other tabs"). */
export function affectedRegions(scope: RefreshScope): { tables: DataTableController[]; page: boolean } {
  const tables: DataTableController[] = [];
  for (const root of document.querySelectorAll<HTMLElement>('[data-table]')) {
    const table = tableController(root);
    const mode = root.dataset.liveRefresh;
    // The audit log follows its own feed and position (refreshAuditLog).
    if (!table || mode === 'never' || mode === 'audit') continue;
    if (scope === 'all') {
      tables.push(table);
      continue;
    }
    const page = shownPage(root, table);
    if (scope.some((c) => affectsPage(c, page))) tables.push(table);
  }
  const page = competitorRegions().some(
    (region) => scope === 'all' || scope.some((c) => altersRegion(c, region)),
  );
  return { tables, page };
}

/** True when a live change means work for this page: a region it alters, or a drag-sorted list. */
export const wouldRefresh = (scope: RefreshScope): boolean => {
  const { tables, page } = affectedRegions(scope);
  return tables.length > 0 || page || hasSortables();
};

/**
 * Shows a change without a page reload: the data tables it can alter refresh their region (keeping
 * search, sort, page and scroll), and a competitor's regions (battlecard, history) are swapped from a fresh
 * copy of the page.
 */
export async function refreshRegions(scope: RefreshScope = 'all'): Promise<void> {
  const affected = affectedRegions(scope);
  const tables = affected.tables.map((table) => table.reload());
  const refreshPage = affected.page
    ? fetch(location.href, { headers: xhrHeaders, credentials: 'same-origin' }).then(async (r) => {
        // The battlecard's competitor is gone (deleted meanwhile): its page answers 404.
        if (r.status === 404 && markCardDeleted()) return;
        if (!r.ok) throw new Error(`${r.status}`);
        swapRegions(new DOMParser().parseFromString(await r.text(), 'text/html'));
      })
    : undefined;
  // Drag-sorted lists re-render themselves, after any drop in progress.
  const pending = [...tables, refreshPage, refreshSortables()].filter(
    (p): p is Promise<void> => p !== undefined,
  );
  await Promise.all(
    pending.map((p) => p.catch((error: unknown) => console.error('Error refreshing:', error))),
  );
}

/**
 * The battlecard on screen is of a competitor deleted meanwhile. The live notice saying so fades after a
 * few seconds, and the card looked as current as ever (its Print and Edit buttons too): it now says so
 * for as long as the page is open, and the changes that can no longer be made are taken away.
 */
function markCardDeleted(): boolean {
  const card = document.querySelector<HTMLElement>('#battlecard');
  if (!card) return false;
  if (card.dataset.deleted === 'true') return true;
  card.dataset.deleted = 'true';
  const banner = document.createElement('p');
  banner.className = 'historical-banner';
  banner.dataset.deletedBanner = '';
  banner.textContent =
    'This competitor was deleted. This is its battlecard as it was; it is no longer kept up to date.';
  // Inside the card, so a print of it says so too.
  card.prepend(banner);
  for (const button of card.querySelectorAll<HTMLButtonElement>('button[data-note]')) button.remove();
  const id = card.dataset.competitorId ?? '';
  document.querySelector(`a[href="/competitors/${CSS.escape(id)}/edit"]`)?.remove();
  return true;
}

/** Swaps each competitor region on screen for its fresh copy in `doc`, and takes its title (a rename). */
function swapRegions(doc: Document): void {
  let swapped = false;
  for (const region of competitorRegions()) {
    const fresh = region.id ? doc.getElementById(region.id) : null;
    if (!fresh) continue;
    replaceKeepingFocus(region, document.importNode(fresh, true));
    swapped = true;
  }
  if (swapped && doc.title) document.title = doc.title;
}

/** The audit log's tables on this page (the audit page's), which new lines of it alter. */
const auditTables = (): DataTableController[] =>
  [...document.querySelectorAll<HTMLElement>('[data-table][data-live-refresh="audit"]')]
    .map((root) => tableController(root))
    .filter((table): table is DataTableController => table !== undefined);

/** True when this page shows the audit log. */
export const showsAuditLog = (): boolean => auditTables().length > 0;

/** Reloads the audit log's tables (keeping search, sort, page and scroll): it has new lines. */
export async function refreshAuditLog(): Promise<void> {
  await Promise.all(
    auditTables().map((table) =>
      table.reload().catch((error: unknown) => console.error('Error refreshing:', error)),
    ),
  );
}

/**
 * Applies the page a component answer carried: each region on screen takes its fresh copy, with no
 * request. A region the answer cannot serve (the user paged on meanwhile) refreshes itself instead.
 */
export async function applyRendered(html: string): Promise<void> {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  const stale: Promise<void>[] = [];
  for (const root of document.querySelectorAll<HTMLElement>('[data-table]')) {
    const table = tableController(root);
    if (table && !table.showRendered(doc)) stale.push(table.reload());
  }
  swapRegions(doc);
  await Promise.all(stale);
}

/**
 * Shows the outcome of this tab's own change (docs/change-path.md): from the answer's fresh regions when
 * it carries them; otherwise (saved but not yet visible, or pending) the live feed's echo of the command
 * brings it — the notice already told the user it will show in a moment.
 */
export async function showChange(answer: ComponentAnswer): Promise<void> {
  if (answer.status === 'rejected') return;
  if (answer.status === 'accepted' && answer.visible) {
    await (answer.html !== undefined ? applyRendered(answer.html) : refreshRegions());
    return;
  }
  wantEcho(answer.commandId, () => void refreshRegions());
}
