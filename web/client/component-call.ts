import { newKey } from './fresh-keys.ts';
import { markSent } from './own-changes.ts';
import { renewSession } from './session-renewal.ts';

/** The answer of a component call (see the server's component protocol). */
export type ComponentAnswer =
  | {
      status: 'accepted';
      commandId: string;
      position: number | null;
      transactionId: string;
      /** The version of what was changed, now (a list's order, a competitor): the next call expects it. */
      version: number;
      /** The change is in the read models; false: saved, but the pages will show it a moment later. */
      visible: boolean;
      /** The page the call came from, re-rendered with the change (its regions replace the page's). */
      html?: string;
    }
  | { status: 'pending'; commandId: string; message: string }
  | {
      status: 'rejected';
      code: string;
      message: string;
      fields?: Record<string, string>;
      details?: Record<string, unknown>;
    };

export interface ComponentRequest {
  event?: string;
  method?: string;
  payload: unknown;
  expect?: { version: number };
  /**
   * The page address whose fresh regions the answer should carry; defaults to this page. `null`: none
   * (the page already shows the change, e.g. a dropped order, and re-rendering it would only cost).
   */
  view?: string | null;
}

const csrfToken = () => document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content ?? '';

/** Waits before each retry of a call whose answer was lost: about 10 s in all. */
const RETRY_DELAYS_MS = [300, 1_000, 2_500, 6_000];
/** Answers that say "the request may not have arrived, or the server is restarting": safe to resend. */
const RETRYABLE_STATUS = new Set([502, 503, 504]);
/**
 * An attempt with no answer this long is lost (a half-open connection, a proxy that hangs): the server
 * answers within its own wait (5 s, `CHANGE_WAIT_MS`), saved, pending or refused. It is resent with the
 * same key, so giving up on it never makes the change twice.
 */
const ATTEMPT_TIMEOUT_MS = 15_000;
/** No attempt starts after this long: the user is told (and may save again, the same change). */
const GIVE_UP_AFTER_MS = 30_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends one event or method call to a server-side component (docs/behaviour.md §6 and §8).
 * Each call carries an `Idempotency-Key` (fresh unless the caller passes the key of the same change
 * sent before), which becomes the command id: when the answer is lost (network error, 502/503/504) the
 * call is sent again with the same key, so it is applied once whatever happened to the first attempt.
 * Only if every attempt fails is the user told. The call names the page it came from, so the answer
 * can carry that page's fresh regions (see `showChange`).
 */
export async function callComponent(
  component: string,
  request: ComponentRequest,
  key = newKey(),
): Promise<ComponentAnswer> {
  markSent(key);
  const view = request.view === undefined ? `${location.pathname}${location.search}` : request.view;
  const call = { ...request, view: view ?? undefined };
  let last: ComponentAnswer | undefined;
  const started = Date.now();
  for (let attempt = 0; attempt <= RETRY_DELAYS_MS.length; attempt++) {
    if (attempt > 0) {
      await sleep(RETRY_DELAYS_MS[attempt - 1] ?? 0);
      if (Date.now() - started >= GIVE_UP_AFTER_MS) break;
    }
    const token = csrfToken();
    const sent = await send(component, call, key);
    if (sent.status === 401 || sent.status === 403)
      return afterSessionRefusal(
        token,
        sent.answer,
        () => send(component, call, key).then((again) => again.answer),
        last !== undefined,
      );
    if (!sent.retry) return sent.answer;
    last = sent.answer;
  }
  return last ?? { status: 'rejected', code: 'network', message: 'Could not reach the server.' };
}

async function send(
  component: string,
  request: ComponentRequest,
  key: string,
): Promise<{ answer: ComponentAnswer; retry: boolean; status?: number }> {
  const signal = AbortSignal.timeout(ATTEMPT_TIMEOUT_MS);
  let response: Response;
  try {
    response = await fetch(`/components/${encodeURIComponent(component)}`, {
      method: 'POST',
      credentials: 'same-origin',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json',
        'X-Requested-With': 'XMLHttpRequest',
        'X-CSRF-Token': csrfToken(),
        'Idempotency-Key': key,
      },
      body: JSON.stringify(request),
      signal,
    });
  } catch {
    return { retry: true, answer: lost(signal) };
  }
  const body = (await response.json().catch(() => undefined)) as
    ComponentAnswer | { error?: { code?: string; message?: string } } | undefined;
  // The answer's body stopped coming: as lost as one that never started.
  if (body === undefined && signal.aborted) return { retry: true, answer: lost(signal) };
  const retry = RETRYABLE_STATUS.has(response.status);
  if (body && 'status' in body) return { answer: body, retry, status: response.status };
  return {
    retry,
    status: response.status,
    answer: {
      status: 'rejected',
      code: body?.error?.code ?? 'failed',
      message: body?.error?.message ?? `The server answered ${response.status}. Please try again.`,
    },
  };
}

/** A call whose answer did not arrive: whether it was handled is not known (code `network`). */
const lost = (signal: AbortSignal): ComponentAnswer => ({
  status: 'rejected',
  code: 'network',
  message: signal.aborted
    ? 'The server did not answer in time. Check your connection and try again.'
    : 'Could not reach the server. Check your connection and try again.',
});

/**
 * A call refused for its session (401: it ended; 403: among other reasons, a form token from before the
 * user signed in again in another tab). Nothing was changed by this attempt (an earlier one whose answer
 * was lost may have been saved). Signed in again as the same user, the page
 * takes the new token and sends the call once more, with the same key; signed in as someone else, the
 * change is not made in their name.
 */
async function afterSessionRefusal(
  token: string,
  answer: ComponentAnswer,
  resend: () => Promise<ComponentAnswer>,
  earlierLost: boolean,
): Promise<ComponentAnswer> {
  const renewal = await renewSession(token);
  if (renewal.renewed) return resend();
  // An earlier attempt may have been saved before the session changed: "not saved" would be a guess.
  if (earlierLost) return { status: 'rejected', code: 'network', message: MAYBE_SAVED };
  if (renewal.message) return { status: 'rejected', code: 'session', message: renewal.message };
  return answer;
}

const MAYBE_SAVED =
  'Your session changed while this change was on its way, and an earlier try got no answer: it may ' +
  'have been saved. Reload the page to see, then make it again if it is missing.';
