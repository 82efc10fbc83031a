/**
 * What a user typed into a form survives their session ending. A form marked `data-keep-typed` is
 * copied into this tab's sessionStorage as it is sent. Sent after the session ended (signed out in
 * another tab, expired), it gets the 401 page, which marks the copy refused; the page's "Sign in" link
 * leads through the sign-in form back to the form's page, which puts the values back and says so.
 * Any other page shown after a send (saved, or shown again with errors) drops the copy: only a send
 * that changed nothing is ever repeated. Passwords and per-send tokens are never kept.
 */
const KEY = 'rivals:unsent-form';
/** A copy older than this is dropped rather than put back into a form the user has long forgotten. */
const KEEP_MS = 60 * 60 * 1000;
const NOT_KEPT = new Set(['_csrf', '_idempotency_key', 'password']);

export const RESTORED =
  'Your session ended before this form was sent, so nothing was saved. What you typed is back: check it and send it again.';
export const RESTORED_WITHOUT_PASSWORD = `${RESTORED} Type the password again: it is never kept.`;

interface UnsentForm {
  /** The page the form was on (path and query), and its action. */
  page: string;
  action: string;
  fields: [string, string][];
  at: number;
  /** Set by the 401 page: the server refused the send, nothing was changed. */
  refused: boolean;
}

const here = (loc: Location) => `${loc.pathname}${loc.search}`;

function read(storage: Storage): UnsentForm | undefined {
  try {
    const value = JSON.parse(storage.getItem(KEY) ?? 'null') as UnsentForm | null;
    return value && Array.isArray(value.fields) && typeof value.page === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

function keep(form: HTMLFormElement, storage: Storage, now: number): void {
  const fields = [...new FormData(form)]
    .filter((entry): entry is [string, string] => typeof entry[1] === 'string' && !NOT_KEPT.has(entry[0]))
    .map(([name, value]) => [name, value] as [string, string]);
  const unsent: UnsentForm = {
    page: here(location),
    action: form.getAttribute('action') ?? '',
    fields,
    at: now,
    refused: false,
  };
  try {
    storage.setItem(KEY, JSON.stringify(unsent));
  } catch {
    // Storage full or refused (private mode): the form is sent all the same, just not kept.
  }
}

function putBack(form: HTMLFormElement, unsent: UnsentForm): void {
  for (const [name, value] of unsent.fields) {
    const control = form.elements.namedItem(name);
    if (control && 'value' in control) control.value = value;
  }
  const notice = document.createElement('p');
  notice.className = 'flash flash--info';
  notice.setAttribute('role', 'status');
  notice.textContent = form.querySelector('input[type="password"]') ? RESTORED_WITHOUT_PASSWORD : RESTORED;
  form.before(notice);
}

export function installUnsentForms(storage: Storage = sessionStorage, now = Date.now): void {
  document.addEventListener('submit', (event) => {
    const form = event.target as HTMLFormElement;
    if (form.matches('form[data-keep-typed]') && !event.defaultPrevented) keep(form, storage, now());
  });
  const unsent = read(storage);
  if (!unsent) return;
  if (document.querySelector('[data-session-ended]')) {
    storage.setItem(KEY, JSON.stringify({ ...unsent, refused: true }));
    return;
  }
  // The way back to the form passes the sign-in page: keep the copy across it.
  if (location.pathname === '/login') return;
  storage.removeItem(KEY);
  if (!unsent.refused || unsent.page !== here(location) || now() - unsent.at > KEEP_MS) return;
  const form = [...document.querySelectorAll<HTMLFormElement>('form[data-keep-typed]')].find(
    (candidate) => candidate.getAttribute('action') === unsent.action,
  );
  if (form) putBack(form, unsent);
}
