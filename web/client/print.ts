/**
 * docs/behaviour.md §9: printing replaces the page with the chosen element's content, opens the print dialog,
 * restores the page, then reloads it. Nodes are moved, never re-parsed from HTML strings. What is marked
 * `.no-print` (the element's own buttons) is left out of the copy, so the printed page holds only what prints.
 */
export function installPrint(): void {
  // Print buttons are shown only from here on (web/styles/app.css): without JavaScript they did nothing.
  document.documentElement.setAttribute('data-can-print', '');
  document.addEventListener('click', (event) => {
    const button = (event.target as Element).closest<HTMLElement>('[data-print]');
    if (!button) return;
    const target = document.querySelector(button.dataset.print ?? '');
    if (!target) return;
    const saved = document.createDocumentFragment();
    while (document.body.firstChild) saved.appendChild(document.body.firstChild);
    const copy = target.cloneNode(true) as Element;
    for (const hidden of copy.querySelectorAll('.no-print')) hidden.remove();
    document.body.appendChild(copy);
    window.print();
    document.body.replaceChildren(saved);
    location.reload();
  });
}
