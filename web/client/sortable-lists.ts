import type Sortable from 'sortablejs';
import { BACKGROUND_HEADER } from '../background-request.ts';
import { callComponent } from './component-call.ts';
import { notify } from './notices.ts';
import { wantEcho } from './own-changes.ts';

/**
 * Drag-sorting (seed §7.6). A root `[data-sortable]` names its component, method and the version of
 * the order it shows. After a drop (or a keyboard move) the whole list goes to the method; the dropped
 * order stays on screen while it saves. Then the region is re-rendered from the server — the saved
 * order, or on a refusal the current one, with the items sliding back. Live updates that arrive while
 * the user drags or saves wait until the drop is settled. Each root is independent.
 */

type Payload = { order: number; value: string; items?: { order: number; value: string }[] }[];

interface Controller {
  root: HTMLElement;
  /** A drag, a save or a grip held down: re-rendering now would pull the list from under the user. */
  busy: boolean;
  pressed: boolean;
  /** Re-renders run one after another: two at once would leave the controller on a detached copy. */
  reloads: Promise<void>;
  refreshWanted: boolean;
  /** Keyboard moves made on screen while a move was saving: saved together once that one is. */
  movedWhileSaving: boolean;
  sortables: Sortable[];
}

const controllers = new Map<string, Controller>();
/** Above this many items SortableJS's swap animation costs more than a frame (tests/bench/drag-sort). */
const ANIMATED_ITEMS_MAX = 300;
let groupSeq = 0;
const unconfirmedMove =
  'Could not reach the server to confirm this move. The list now shows the saved order.';

export function installSortableLists(): void {
  for (const root of document.querySelectorAll<HTMLElement>('[data-sortable][data-can-sort]')) {
    void enhance(root);
  }
}

/** True when this page has drag-sorted lists (they re-render on every change: any may reorder them). */
export const hasSortables = (): boolean => controllers.size > 0;

/** Re-renders every sortable region now, or right after the current drop has been settled. */
export async function refreshSortables(): Promise<void> {
  await Promise.all(
    [...controllers.values()].map(async (c) => {
      if (c.busy || c.pressed) c.refreshWanted = true;
      else await reload(c);
    }),
  );
}

async function enhance(root: HTMLElement): Promise<void> {
  const { default: SortableJs } = await import('sortablejs');
  const controller: Controller = controllers.get(root.id) ?? {
    root,
    busy: false,
    pressed: false,
    reloads: Promise.resolve(),
    refreshWanted: false,
    movedWhileSaving: false,
    sortables: [],
  };
  controller.root = root;
  controllers.set(root.id, controller);
  root.dataset.enhanced = 'true';
  const onStart = () => {
    controller.busy = true;
  };
  const before = { value: '' };
  const common = {
    // SortableJS animates a swap by measuring every item of the list (style and box, each move): on a
    // ranking of thousands that is a long task per pointer move. Long lists move without it.
    animation: root.querySelectorAll('.sortable-item').length > ANIMATED_ITEMS_MAX ? 0 : 150,
    // Mouse and touch events instead of native drag and drop: one code path, and touch works.
    forceFallback: true,
    fallbackOnBody: true,
    ghostClass: 'sortable-ghost',
    chosenClass: 'sortable-chosen',
    onStart: () => {
      before.value = JSON.stringify(payloadOf(root));
      onStart();
    },
    onEnd: () => void settle(controller, before.value),
  };
  const group = `sortable-${root.id}-${groupSeq++}`;
  for (const list of root.querySelectorAll<HTMLElement>('[data-sortable-list]')) {
    controller.sortables.push(
      SortableJs.create(list, {
        ...common,
        handle: '[data-drag-handle="item"]',
        draggable: '.sortable-item',
        group: root.dataset.sortable === 'grouped' ? group : undefined,
      }),
    );
  }
  const groups = root.querySelector<HTMLElement>('[data-sortable-groups]');
  if (groups) {
    controller.sortables.push(
      SortableJs.create(groups, {
        ...common,
        handle: '[data-drag-handle="group"]',
        draggable: '.sortable-group',
      }),
    );
  }
  root.addEventListener('keydown', (event) => onKey(controller, event));
  root.addEventListener('pointerdown', (event) => {
    if (!(event.target as Element).closest('[data-drag-handle]')) return;
    controller.pressed = true;
    const release = () => {
      controller.pressed = false;
      // A press that never became a drag: catch up with what arrived meanwhile.
      if (!controller.busy && controller.refreshWanted) void reload(controller);
    };
    document.addEventListener('pointerup', () => setTimeout(release, 0), { once: true });
  });
  root.dataset.sortReady = 'true';
}

/** The seed's shapes, read from the list as it is on screen. */
export function payloadOf(root: HTMLElement): Payload {
  const itemsOf = (list: Element | null) =>
    [...(list?.querySelectorAll<HTMLElement>(':scope > .sortable-item') ?? [])].map((li, i) => ({
      order: i + 1,
      value: li.dataset.id ?? '',
    }));
  if (root.dataset.sortable !== 'grouped') return itemsOf(root.querySelector('[data-sortable-list]'));
  return [...root.querySelectorAll<HTMLElement>('[data-sortable-groups] > .sortable-group')].map((g, i) => ({
    order: i + 1,
    value: g.dataset.id ?? '',
    items: itemsOf(g.querySelector('[data-sortable-list]')),
  }));
}

async function settle(controller: Controller, before: string): Promise<void> {
  const { root } = controller;
  const payload = payloadOf(root);
  if (JSON.stringify(payload) === before) {
    controller.busy = false;
    if (controller.refreshWanted) await reload(controller);
    return;
  }
  renumber(root);
  controller.busy = true;
  root.dataset.saving = 'true';
  for (const s of controller.sortables) s.option('disabled', true);
  const answer = await callComponent(root.dataset.component ?? '', {
    method: root.dataset.method ?? '',
    payload,
    expect: { version: Number(root.dataset.version ?? '0') },
    // The dropped order is on screen already: the answer need not carry the page (a 10,000-item
    // ranking is megabytes to render, send and parse).
    view: null,
  });
  // The screen is reloaded below unless this move was stored as sent: keys pressed meanwhile are undone
  // with it (and said to be), or saved next.
  const movedWhileSaving = controller.movedWhileSaving;
  controller.movedWhileSaving = false;
  if (answer.status === 'rejected') {
    // No answer at all (every resend lost): the drop may well be saved, so say only what is known; the
    // reload below shows the order the server has.
    const unknown = answer.code === 'network';
    notify(unknown ? unconfirmedMove : answer.message, 'error');
    announce(root, unknown ? unconfirmedMove : `Not saved: ${answer.message}`);
    // The order as it is now, sliding back from the refused one.
    await reload(controller, { animate: true, settling: true });
    return;
  }
  if (answer.status === 'accepted') {
    // Stored exactly as dropped: the list on screen is the saved order, at the version the answer names
    // (the move buttons' forms expect it too).
    root.dataset.version = String(answer.version);
    for (const input of root.querySelectorAll<HTMLInputElement>('input[name="expect"]'))
      input.value = String(answer.version);
    // Moves pressed while this one saved go next, as one move from the order just stored.
    const saved = JSON.stringify(payload);
    if (movedWhileSaving && JSON.stringify(payloadOf(root)) !== saved) return settle(controller, saved);
  }
  // What the move announced stays, unless the lists are still catching up.
  if (answer.status === 'pending' || !answer.visible)
    announce(root, 'Saved; the list will update in a moment.');
  // Not yet in the read models (or no answer in time): the live echo of this drop re-renders the list
  // once it is (docs/change-path.md); a visible change needs no echo.
  if (answer.status === 'pending' || !answer.visible)
    wantEcho(answer.commandId, () => void refreshSortables());
  if (answer.status === 'pending' && movedWhileSaving) {
    // Not known to be stored yet, so the next moves cannot name the version they follow: the list goes
    // back to the saved order, and says so.
    announce(root, 'Saved the first move only; the list will update in a moment. Make the next moves again.');
    controller.refreshWanted = true;
  }
  for (const s of controller.sortables) s.option('disabled', false);
  delete root.dataset.saving;
  controller.busy = false;
  // Changes from others that arrived during the drop.
  if (controller.refreshWanted) await reload(controller);
}

/** Fetches the page and swaps the region in, sliding items from where they were to where they are. */
function reload(controller: Controller, options: ReloadOptions = {}): Promise<void> {
  controller.reloads = controller.reloads
    .then(() => reloadNow(controller, options))
    .catch((error: unknown) => {
      console.error('Error refreshing the list:', error);
    });
  return controller.reloads;
}

interface ReloadOptions {
  /** Slide the items from where they were (a refused drop goes back). */
  animate?: boolean;
  /** The drop being settled: apply even though the controller is busy with it. */
  settling?: boolean;
}

async function reloadNow(controller: Controller, options: ReloadOptions = {}): Promise<void> {
  const { animate = false, settling = false } = options;
  const old = controller.root;
  const html = await fetchPage();
  const fresh = html ? new DOMParser().parseFromString(html, 'text/html').getElementById(old.id) : undefined;
  if (!settling && (controller.busy || controller.pressed)) {
    // The user took hold of the list while this was loading: apply it after the drop instead.
    controller.refreshWanted = true;
    return;
  }
  for (const s of controller.sortables) s.destroy();
  controller.sortables = [];
  controller.busy = false;
  controller.refreshWanted = false;
  if (!fresh) {
    delete old.dataset.saving;
    old.dataset.sortReady = 'false';
    await enhance(old);
    return;
  }
  const focusedId = (document.activeElement?.closest('[data-id]') as HTMLElement | null)?.dataset.id;
  const places = animate ? positions(old) : undefined;
  const next = document.importNode(fresh, true);
  // The live region stays the same node, so what it announces is not lost with the old list.
  const status = old.querySelector('[data-sort-status]');
  if (status) next.querySelector('[data-sort-status]')?.replaceWith(status);
  old.replaceWith(next);
  const region = next;
  if (places) slideFrom(region, places);
  if (focusedId)
    region
      .querySelector<HTMLElement>(
        `[data-id="${CSS.escape(focusedId)}"] > [data-drag-handle], [data-id="${CSS.escape(focusedId)}"] [data-drag-handle="group"]`,
      )
      ?.focus();
  await enhance(region);
}

/** The list as saved now: after a drop, or a change elsewhere; the page's own request, not activity. */
async function fetchPage(): Promise<string | undefined> {
  const response = await fetch(location.href, {
    headers: { 'X-Requested-With': 'XMLHttpRequest', [BACKGROUND_HEADER]: '1' },
    credentials: 'same-origin',
  }).catch(() => undefined);
  return response?.ok ? await response.text() : undefined;
}

function positions(root: HTMLElement): Map<string, DOMRect> {
  return new Map(
    [...root.querySelectorAll<HTMLElement>('[data-id]')].map((el) => [
      el.dataset.id ?? '',
      el.getBoundingClientRect(),
    ]),
  );
}

function slideFrom(root: HTMLElement, places: Map<string, DOMRect>): void {
  const height = window.innerHeight;
  const seen = (r: DOMRect) => r.bottom >= 0 && r.top <= height;
  for (const el of root.querySelectorAll<HTMLElement>('.sortable-item[data-id]')) {
    const was = places.get(el.dataset.id ?? '');
    if (!was) continue;
    const now = el.getBoundingClientRect();
    // Only what can be seen slides: thousands of animations off screen would only cost frames.
    if (!seen(was) && !seen(now)) continue;
    const dx = was.left - now.left;
    const dy = was.top - now.top;
    if (dx === 0 && dy === 0) continue;
    el.animate([{ transform: `translate(${dx}px, ${dy}px)` }, { transform: 'none' }], {
      duration: 250,
      easing: 'ease-out',
    });
  }
}

/** The rank at the end of a ranking grip's name ("Move Brightlane, rank 2"). */
const RANK_IN_LABEL = /, rank \d+$/;

/** Ranks and segment counts as the list on screen now stands, one pass per list (a ranking has thousands). */
function renumber(root: HTMLElement): void {
  for (const list of root.querySelectorAll<HTMLElement>('[data-sortable-list]')) {
    const items = list.querySelectorAll<HTMLElement>(':scope > .sortable-item');
    items.forEach((li, i) => {
      const rank = li.querySelector('[data-rank]');
      if (rank && rank.textContent !== String(i + 1)) rank.textContent = String(i + 1);
      // The grip's name says the rank too, and is what a screen reader reads on focus: it follows the move.
      const handle = li.querySelector(':scope > [data-drag-handle="item"]');
      const label = handle?.getAttribute('aria-label');
      if (handle && label && RANK_IN_LABEL.test(label)) {
        const renamed = label.replace(RANK_IN_LABEL, `, rank ${i + 1}`);
        if (renamed !== label) handle.setAttribute('aria-label', renamed);
      }
    });
    const count = list.closest('.sortable-group')?.querySelector('[data-count]');
    if (count) count.textContent = items.length.toLocaleString('en-US');
  }
}

function announce(root: HTMLElement, text: string): void {
  const region = root.querySelector('[data-sort-status]');
  if (region) region.textContent = text;
}

/** The keyboard alternative: the same moves as a drag, the same payload, announced in the live region. */
function onKey(controller: Controller, event: KeyboardEvent): void {
  const handle = (event.target as HTMLElement).closest<HTMLElement>('[data-drag-handle]');
  if (!handle || !['ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(event.key))
    return;
  event.preventDefault();
  const { root } = controller;
  // During a drag the list is the mouse's; during a save the keys go on moving (saved after it).
  const saving = root.dataset.saving === 'true';
  if (controller.busy && !saving) return;
  const kind = handle.dataset.dragHandle;
  const item = handle.closest<HTMLElement>(kind === 'group' ? '.sortable-group' : '.sortable-item');
  const container = item?.parentElement;
  if (!item || !container) return;
  const before = JSON.stringify(payloadOf(root));
  const siblings = () =>
    [...container.children].filter((el) =>
      el.matches(kind === 'group' ? '.sortable-group' : '.sortable-item'),
    );
  const key = event.key;
  if (kind !== 'group' && (key === 'ArrowLeft' || key === 'ArrowRight')) {
    const groups = [...root.querySelectorAll<HTMLElement>('[data-sortable-groups] > .sortable-group')];
    const at = groups.findIndex((g) => g.contains(item));
    const target = groups[key === 'ArrowLeft' ? at - 1 : at + 1]?.querySelector('[data-sortable-list]');
    if (!target)
      return announce(
        root,
        `${item.dataset.name} is already in the ${key === 'ArrowLeft' ? 'first' : 'last'} segment.`,
      );
    target.append(item);
  } else {
    const list = siblings();
    const at = list.indexOf(item);
    const up = key === 'ArrowUp' || key === 'ArrowLeft';
    if (key === 'Home') container.insertBefore(item, list[0] ?? null);
    else if (key === 'End') (list.at(-1) ?? item).after(item);
    else if (up && at > 0) container.insertBefore(item, list[at - 1] ?? null);
    else if (!up && at < list.length - 1) list[at + 1]?.after(item);
  }
  handle.focus();
  if (JSON.stringify(payloadOf(root)) === before)
    return announce(root, `${item.dataset.name} cannot move further.`);
  const list = [...(item.parentElement?.children ?? [])];
  const segment = kind !== 'group' ? item.closest<HTMLElement>('.sortable-group')?.dataset.name : undefined;
  announce(
    root,
    `${kind === 'group' ? 'Segment ' : ''}${item.dataset.name} moved to ${segment ? `${segment}, ` : ''}position ${list.indexOf(item) + 1} of ${list.length}.`,
  );
  if (saving) {
    renumber(root);
    controller.movedWhileSaving = true;
    return;
  }
  controller.busy = true;
  void settle(controller, before);
}
