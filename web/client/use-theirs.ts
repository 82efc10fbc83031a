/**
 * The edit form shown again after a conflict (decision 0021) marks each field both changed, with a button
 * that puts the other value in. The server renders the buttons hidden (without this script they would do
 * nothing; the value is in the message, to type); this shows them and makes them work.
 */
export function installUseTheirs(): void {
  for (const button of document.querySelectorAll<HTMLButtonElement>('button[data-use-theirs]'))
    button.hidden = false;
  document.addEventListener('click', (event) => {
    const button = (event.target as Element).closest<HTMLButtonElement>('button[data-use-theirs]');
    const form = button?.form;
    if (!button || !form) return;
    const control = form.elements.namedItem(button.dataset.useTheirs ?? '');
    if (!(control instanceof HTMLInputElement || control instanceof HTMLSelectElement)) return;
    control.value = button.dataset.value ?? '';
    control.dispatchEvent(new Event('input', { bubbles: true }));
    control.dispatchEvent(new Event('change', { bubbles: true }));
    control.focus();
  });
}
