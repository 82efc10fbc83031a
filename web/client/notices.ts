/** A short notice in the page's polite live region; it fades after a few seconds. */
export function notify(text: string, kind: 'success' | 'error' | 'info' = 'success'): void {
  const region = document.querySelector<HTMLElement>('[data-notices]');
  if (!region) return;
  const notice = document.createElement('p');
  notice.className = `flash flash--${kind}`;
  notice.setAttribute('role', kind === 'error' ? 'alert' : 'status');
  notice.textContent = text;
  region.append(notice);
  setTimeout(() => notice.remove(), 5_000);
}
