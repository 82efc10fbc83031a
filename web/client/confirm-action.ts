import { sweetAlert } from './sweetalert.ts';

/**
 * Questions asked and not answered yet (from the click, while the dialog's code loads, until its answer
 * is acted on). The auto-refresh must not replace their forms meanwhile: a detached form cannot be
 * submitted, so "Yes" would do nothing, silently.
 */
let asking = 0;

/** True while a dialog is open or about to be: the page is being answered, not only read. */
const answering = () => asking > 0 || document.querySelector('.swal2-container') !== null;

/**
 * Like the delete confirmation: a form with `data-confirm="question"` is submitted only after the
 * dialog says yes. Without JavaScript it submits directly (the server checks the role and CSRF).
 */
export function installActionConfirmation(): void {
  document.addEventListener('submit', (event) => {
    const form = event.target as HTMLFormElement;
    if (!form.matches('form[data-confirm]')) return;
    event.preventDefault();
    asking++;
    void sweetAlert()
      .then((swal) =>
        swal.fire({
          titleText: 'Are you sure?',
          text: form.dataset.confirm ?? '',
          icon: 'warning',
          showCancelButton: true,
          confirmButtonText: form.dataset.confirmButton ?? 'Yes',
          cancelButtonText: 'Cancel',
        }),
      )
      .then((result) => {
        if (result.isConfirmed && form.isConnected) form.submit();
      })
      .finally(() => asking--);
  });
}

/**
 * Regions marked `data-refresh-every="ms"` are replaced by a fresh copy from the server that often
 * (the /ops status), skipped while a confirmation dialog is open or the tab is hidden; a copy that
 * arrives while one is open is dropped (the next one comes a few seconds later).
 */
export function installAutoRefresh(): void {
  const region = document.querySelector<HTMLElement>('[data-refresh-every]');
  if (!region?.id) return;
  const id = region.id;
  const every = Math.max(1_000, Number(region.dataset.refreshEvery) || 5_000);
  const tick = async () => {
    if (document.hidden || answering()) return;
    const response = await fetch(location.href, {
      headers: { 'X-Requested-With': 'XMLHttpRequest' },
      credentials: 'same-origin',
    });
    if (!response.ok) return;
    const fresh = new DOMParser().parseFromString(await response.text(), 'text/html').getElementById(id);
    const current = document.getElementById(id);
    if (fresh && current && !answering()) current.replaceWith(document.importNode(fresh, true));
  };
  setInterval(() => void tick().catch((error: unknown) => console.error('Error refreshing:', error)), every);
}
