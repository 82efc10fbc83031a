/**
 * Re-rendered regions (a table page, the battlecard) replace the elements a keyboard user was on; without
 * help focus falls back to the start of the page and they have to Tab all the way back. These find the
 * same control in the fresh copy: the row it is in, and what it is (a note button by its column, a sort
 * button by its column, a control that names itself with `data-control`, anything else by its accessible
 * label: "Next" is still "Next" on the next page).
 */
const identities = ['data-control', 'data-column', 'data-sort-button', 'aria-label', 'data-page'];

/** A selector for `el`'s counterpart in a fresh copy of its region; undefined when it has no identity. */
export function sameControl(el: HTMLElement): string | undefined {
  const attribute = identities.find((a) => el.hasAttribute(a));
  if (!attribute) return undefined;
  const own = `${el.localName}[${attribute}="${CSS.escape(el.getAttribute(attribute) ?? '')}"]`;
  const row = el.closest<HTMLElement>('[data-row-id]')?.dataset.rowId;
  return row === undefined ? own : `[data-row-id="${CSS.escape(row)}"] ${own}`;
}

/**
 * Focuses the counterpart of `gone` (no longer in the page) inside `within`; true if there was one. A
 * page link has none on the page it leads to (it is the current page there, and "Next" on the last page is
 * no link): focus goes to the current page's number, so the next Tab goes on from there.
 */
export function refocus(gone: HTMLElement, within: ParentNode = document): boolean {
  const selector = sameControl(gone);
  const counterpart =
    (selector ? within.querySelector<HTMLElement>(selector) : null) ??
    (gone.closest('.pagination')
      ? within.querySelector<HTMLElement>('.pagination [aria-current="page"]')
      : null);
  counterpart?.focus();
  return !!counterpart;
}

/** Replaces `old` with `fresh`; focus that was inside `old` moves to the same control inside `fresh`. */
export function replaceKeepingFocus(old: Element, fresh: Element): void {
  const focused = document.activeElement;
  old.replaceWith(fresh);
  if (focused instanceof HTMLElement && old.contains(focused)) refocus(focused, fresh);
}
