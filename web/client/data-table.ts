import { tableEvents } from '../components/data-table/table-events.ts';
import { sortedBy, toQueryString, type TableState } from '../components/data-table/table-state.ts';
import { BACKGROUND_HEADER } from '../background-request.ts';
import { replaceKeepingFocus } from './keep-focus.ts';

const LOADING_DELAY_MS = 150;

/**
 * The table controller (docs/behaviour.md §2, §3): keeps the state, asks the page address again with the
 * four parameters and `X-Requested-With`, swaps in the returned `[data-table-region]`, and pushes the
 * address. Only the newest request may apply (older ones are aborted). A failure is logged as
 * 'Error updating table:' and leaves the table as it was.
 */
export class DataTableController {
  /** The newest state asked for: the next change builds on it, so quick successive changes combine. */
  private state: TableState;
  /** The state the region on screen shows; a failed refresh falls back to it. */
  private shown: TableState;
  private inFlight: AbortController | undefined;
  private readonly path: string;

  constructor(private readonly root: HTMLElement) {
    this.state = JSON.parse(root.dataset.state ?? '{}') as TableState;
    this.shown = this.state;
    this.path = root.dataset.path ?? location.pathname;
    root.addEventListener('click', (event) => this.onClick(event));
    root.addEventListener('submit', (event) => this.onSubmit(event));
    root.addEventListener(tableEvents.request, (event) => {
      void this.update({ ...this.state, ...(event as CustomEvent<Partial<TableState>>).detail });
    });
    // Remember this table's state on the entry we arrived on, so "back" can return to it.
    history.replaceState({ ...(history.state as object), table: this.state }, '', location.href);
  }

  get current(): TableState {
    return this.state;
  }

  /** docs/behaviour.md §3: choosing a column sorts it, toggling asc → desc, from page 1; each change refreshes. */
  sortBy(column: string): Promise<void> {
    return this.update(sortedBy(this.state, column));
  }

  gotoPage(page: number): Promise<void> {
    return this.update({ ...this.state, page });
  }

  /** Back/forward: show the table of that address without pushing a new entry. */
  restore(state: TableState): Promise<void> {
    this.root.dispatchEvent(new CustomEvent(tableEvents.restored, { detail: state }));
    return this.update(state, { push: false });
  }

  /** Re-fetch the current state (a live update elsewhere changed the data): the page's doing, not activity. */
  reload(): Promise<void> {
    return this.update(this.state, { push: false, background: true });
  }

  async update(next: TableState, options: { push?: boolean; background?: boolean } = {}): Promise<void> {
    this.state = next;
    this.inFlight?.abort();
    const controller = new AbortController();
    this.inFlight = controller;
    const url = `${this.path}?${toQueryString(next)}`;
    const loading = this.root.querySelector<HTMLElement>('[data-table-loading]');
    const region = () => this.root.querySelector<HTMLElement>('[data-table-region]');
    const spinner = setTimeout(() => {
      if (loading) loading.hidden = false;
      region()?.setAttribute('aria-busy', 'true');
    }, LOADING_DELAY_MS);
    try {
      const response = await fetch(url, {
        headers: {
          'X-Requested-With': 'XMLHttpRequest',
          Accept: 'text/html',
          ...(options.background ? { [BACKGROUND_HEADER]: '1' } : {}),
        },
        signal: controller.signal,
        credentials: 'same-origin',
      });
      if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
      const html = await response.text();
      if (controller.signal.aborted) return;
      const fresh = freshRegion(new DOMParser().parseFromString(html, 'text/html'), this.root.id);
      if (!fresh) throw new Error('the answer has no table region');
      this.swapIn(fresh, options.push !== false);
    } catch (error) {
      if (controller.signal.aborted) return;
      // The table stays as it was, and so does the state the next sort or page change builds on
      // (otherwise choosing "name" after a failed "name ascending" would jump to descending).
      this.state = this.shown;
      console.error('Error updating table:', error);
    } finally {
      clearTimeout(spinner);
      if (this.inFlight === controller) {
        this.inFlight = undefined;
        if (loading) loading.hidden = true;
        region()?.setAttribute('aria-busy', 'false');
      }
    }
  }

  /**
   * Shows a region the server already rendered (a component answer carries the page it came from):
   * true if it was rendered for what this table shows now; false if the user moved on meanwhile.
   */
  showRendered(doc: Document): boolean {
    const fresh = freshRegion(doc, this.root.id);
    const rendered = JSON.parse(fresh?.dataset.state ?? 'null') as TableState | null;
    if (!fresh || !rendered || this.inFlight || !sameView(rendered, this.state)) return false;
    this.swapIn(fresh, false);
    return true;
  }

  private swapIn(fresh: HTMLElement, push: boolean): void {
    const currentRegion = this.root.querySelector<HTMLElement>('[data-table-region]');
    if (!currentRegion) throw new Error('the table has no region');
    const scrollY = window.scrollY;
    replaceKeepingFocus(currentRegion, document.importNode(fresh, true));
    window.scrollTo({ top: scrollY });
    // The server may have clamped the page (or dropped an unknown sort): adopt what it rendered.
    const rendered = JSON.parse(fresh.dataset.state ?? 'null') as TableState | null;
    if (rendered) this.state = rendered;
    this.shown = this.state;
    const finalUrl = `${this.path}?${toQueryString(this.state)}`;
    if (push) history.pushState({ table: this.state }, '', finalUrl);
    else history.replaceState({ table: this.state }, '', finalUrl);
    this.announce(fresh.dataset.summary ?? '');
    this.root.dispatchEvent(new CustomEvent(tableEvents.updated, { detail: this.state }));
  }

  private announce(text: string): void {
    const status = this.root.querySelector<HTMLElement>('[data-table-status]');
    if (status) status.textContent = text;
  }

  private onClick(event: MouseEvent): void {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey)
      return;
    const target = event.target as Element;
    const pageLink = target.closest<HTMLAnchorElement>('a[data-page]');
    if (pageLink && this.root.contains(pageLink)) {
      event.preventDefault();
      void this.gotoPage(Number(pageLink.dataset.page));
      return;
    }
    const clear = target.closest<HTMLAnchorElement>('a[data-clear-search]');
    if (clear) {
      event.preventDefault();
      this.root.dispatchEvent(
        new CustomEvent(tableEvents.restored, { detail: { ...this.state, search: '' } }),
      );
      // The link leaves with the empty result: focus goes to the search box, where a new search starts.
      this.root.querySelector<HTMLInputElement>('input[type="search"]')?.focus();
      void this.update({ ...this.state, search: '', page: 1 });
    }
  }

  private onSubmit(event: SubmitEvent): void {
    const form = event.target as HTMLFormElement;
    const column = form.dataset.sort;
    if (!form.hasAttribute('data-sort-form') || !column) return;
    event.preventDefault();
    void this.sortBy(column).then(() => {
      // Keep keyboard focus on the header the user activated, now re-rendered.
      this.root.querySelector<HTMLButtonElement>(`[data-sort-button="${CSS.escape(column)}"]`)?.focus();
    });
  }
}

/** The table region of `rootId` in a rendered page or fragment. */
const freshRegion = (doc: Document, rootId: string): HTMLElement | null =>
  doc.querySelector<HTMLElement>(`#${CSS.escape(rootId)} [data-table-region]`) ??
  doc.querySelector<HTMLElement>('[data-table-region]');

const sameView = (a: TableState, b: TableState): boolean =>
  a.search === b.search && a.sort === b.sort && a.page === b.page && a.perPage === b.perPage;

const controllers = new WeakMap<HTMLElement, DataTableController>();

export function installDataTables(): void {
  for (const root of document.querySelectorAll<HTMLElement>('[data-table]')) {
    if (!controllers.has(root)) controllers.set(root, new DataTableController(root));
  }
  window.addEventListener('popstate', (event) => {
    const state = (event.state as { table?: TableState } | null)?.table;
    for (const root of document.querySelectorAll<HTMLElement>('[data-table]')) {
      const controller = controllers.get(root);
      if (controller) void controller.restore(state ?? stateFromLocation(controller.current));
    }
  });
}

export const tableController = (root: HTMLElement): DataTableController | undefined => controllers.get(root);

function stateFromLocation(fallback: TableState): TableState {
  const params = new URLSearchParams(location.search);
  return {
    search: params.get('search') ?? '',
    sort: params.get('sort') ?? '',
    page: Number(params.get('page')) || 1,
    perPage: Number(params.get('perPage')) || fallback.perPage,
  };
}
