import { replaceKeepingFocus } from './keep-focus.ts';
import { submitConfirmed } from './submit-confirmed.ts';
import { sweetAlert } from './sweetalert.ts';

/**
 * Questions asked and not answered yet (from the click, while the dialog's code loads, until the dialog
 * has closed and given focus back). The auto-refresh must not replace their forms meanwhile: a detached
 * form cannot be submitted, so "Yes" would do nothing, silently; and SweetAlert gives focus back to the
 * button that opened it 100 ms after the dialog has gone: to a detached button, focus would be lost.
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
    let closed = false;
    const close = () => {
      if (!closed) asking--;
      closed = true;
    };
    void sweetAlert()
      .then((swal) =>
        swal.fire({
          titleText: 'Are you sure?',
          text: form.dataset.confirm ?? '',
          icon: 'warning',
          showCancelButton: true,
          confirmButtonText: form.dataset.confirmButton ?? 'Yes',
          cancelButtonText: 'Cancel',
          // As the delete confirmation: a second Enter (a double press) must not do what is asked, as
          // "Discard … It will never be handled." cannot be undone. "Yes" is one Shift+Tab away.
          focusCancel: true,
          // After focus is back on the button that opened it (or nowhere, when it failed to open); or
          // when another dialog replaces this one before it has closed (SweetAlert2 then destroys it, and
          // its didClose never comes: the refresh would stop for good, silently).
          didClose: close,
          didDestroy: close,
        }),
      )
      .then((result) => {
        if (result.isConfirmed) submitConfirmed(form);
      })
      .catch((error: unknown) => {
        close();
        throw error;
      });
  });
}

/** Why a refresh failed, in words, and what to do; undefined when it worked. */
function refreshProblem(response: Response | undefined, every: number): string | undefined {
  if (response?.ok) return undefined;
  const again = `This page tries again every ${Math.round(every / 1000)} s.`;
  if (!response) return `the server did not answer. ${again}`;
  if (response.status === 401 || response.status === 403)
    return 'you are signed out, or may no longer see this page. Reload the page.';
  return `the server answered ${response.status}. ${again}`;
}

const clockTime = new Intl.DateTimeFormat('en-GB', { timeStyle: 'long', hourCycle: 'h23' });

/**
 * Says above the region that its figures stopped updating, since when and why (kept from the first
 * failure while the reason stays the same), or removes that once a refresh works again.
 */
function showStale(region: HTMLElement, problem: string | undefined): void {
  const id = `${region.id}-stale`;
  let notice = document.getElementById(id);
  if (!problem) return notice?.remove();
  if (notice?.dataset.problem === problem) return;
  if (!notice) {
    notice = document.createElement('p');
    notice.id = id;
    notice.className = 'field__error';
    notice.setAttribute('role', 'status');
    region.before(notice);
  }
  // On the viewer's clock, as the pages write times (web/components/time-zone.ts): "13:10:05 GMT+9".
  const since = notice.dataset.since ?? clockTime.format(new Date());
  notice.dataset.since = since;
  notice.dataset.problem = problem;
  notice.textContent = `The figures below stopped updating at ${since}: ${problem}`;
}

/**
 * Regions marked `data-refresh-every="ms"` are replaced by a fresh copy from the server that often
 * (the /ops status), skipped while a confirmation dialog is open or the tab is hidden; a copy that
 * arrives while one is open is dropped (the next one comes a few seconds later). Focus on a button in
 * the region moves to the same button in the copy. While refreshing
 * fails, the page says so: an operator must not take figures frozen by an outage for current ones.
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
    }).catch(() => undefined);
    const current = document.getElementById(id);
    if (current) showStale(current, refreshProblem(response, every));
    if (!response?.ok) return;
    const fresh = new DOMParser().parseFromString(await response.text(), 'text/html').getElementById(id);
    if (fresh && current && !answering()) replaceKeepingFocus(current, document.importNode(fresh, true));
  };
  setInterval(() => void tick().catch((error: unknown) => console.error('Error refreshing:', error)), every);
}
