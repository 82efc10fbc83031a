import { tableController } from './data-table.ts';
import { refreshSortables } from './sortable-lists.ts';

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
    ? fetch(location.href, { headers: { 'X-Requested-With': 'XMLHttpRequest' }, credentials: 'same-origin' })
        .then((r) => (r.ok ? r.text() : Promise.reject(new Error(`${r.status}`))))
        .then((html) => {
          const fresh = new DOMParser().parseFromString(html, 'text/html').querySelector('#battlecard');
          if (fresh) card.replaceWith(document.importNode(fresh, true));
        })
    : undefined;
  // Drag-sorted lists re-render themselves, after any drop in progress.
  const pending = [...tables, refreshCard, refreshSortables()].filter(
    (p): p is Promise<void> => p !== undefined,
  );
  await Promise.all(
    pending.map((p) => p.catch((error: unknown) => console.error('Error refreshing:', error))),
  );
}
