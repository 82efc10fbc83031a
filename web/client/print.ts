/**
 * docs/behaviour.md §9: printing replaces the page with the chosen element's content, opens the print dialog,
 * restores the page, then reloads it. Nodes are moved, never re-parsed from HTML strings.
 */
export function installPrint(): void {
  document.addEventListener('click', (event) => {
    const button = (event.target as Element).closest<HTMLElement>('[data-print]');
    if (!button) return;
    const target = document.querySelector(button.dataset.print ?? '');
    if (!target) return;
    const saved = document.createDocumentFragment();
    while (document.body.firstChild) saved.appendChild(document.body.firstChild);
    document.body.appendChild(target.cloneNode(true));
    window.print();
    document.body.replaceChildren(saved);
    location.reload();
  });
}
