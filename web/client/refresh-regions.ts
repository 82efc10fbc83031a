import type { ComponentAnswer } from './component-call.ts';
import { tableController } from './data-table.ts';
import { wantEcho } from './own-changes.ts';
import { refreshSortables } from './sortable-lists.ts';

const xhrHeaders = { 'X-Requested-With': 'XMLHttpRequest' };

/**
 * Shows a change without a page reload: data tables refresh their region (keeping search, sort, page
 * and scroll), and the battlecard is swapped from a fresh copy of the page.
 */
export async function refreshRegions(): Promise<void> {
  const tables = [...document.querySelectorAll<HTMLElement>('[data-table]')].map((root) =>
    tableController(root)?.reload(),
  );
  const card = document.querySelector<HTMLElement>('#battlecard');
  const refreshCard = card
    ? fetch(location.href, { headers: xhrHeaders, credentials: 'same-origin' })
        .then((r) => (r.ok ? r.text() : Promise.reject(new Error(`${r.status}`))))
        .then((html) => swapCard(new DOMParser().parseFromString(html, 'text/html')))
    : undefined;
  // Drag-sorted lists re-render themselves, after any drop in progress.
  const pending = [...tables, refreshCard, refreshSortables()].filter(
    (p): p is Promise<void> => p !== undefined,
  );
  await Promise.all(
    pending.map((p) => p.catch((error: unknown) => console.error('Error refreshing:', error))),
  );
}

function swapCard(doc: Document): boolean {
  const card = document.querySelector<HTMLElement>('#battlecard');
  const fresh = doc.querySelector('#battlecard');
  if (!card || !fresh) return false;
  card.replaceWith(document.importNode(fresh, true));
  return true;
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
  swapCard(doc);
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
