/**
 * A page outlives its session: the user signs out in another tab and in again, and the page's form
 * token (derived from the old session) no longer matches. A call refused for that reason can look
 * again: GET /session says who this browser is signed in as now and carries the new token.
 */
export type Renewal =
  /** Signed in again as the page's user: the page now has the new token; the call may be resent. */
  | { renewed: true }
  /** Nothing to renew (signed out, or the token was not the problem); `message` when there is more to say. */
  | { renewed: false; message?: string };

export const SIGNED_IN_AS_SOMEONE_ELSE =
  'This browser is now signed in as someone else, so this change was not saved. Copy your text if you need it, then reload the page.';

const metaContent = (doc: Document, name: string) =>
  doc.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content;

/** Who this browser is signed in as now, and that session's form token (GET /session). */
export interface SessionNow {
  userId: string | null;
  csrfToken: string;
}

const loadSession = async (): Promise<SessionNow | undefined> => {
  const response = await fetch('/session', {
    credentials: 'same-origin',
    headers: { Accept: 'application/json' },
  });
  return response.ok ? ((await response.json()) as SessionNow) : undefined;
};

/**
 * Looks at the browser's session now; takes its token when it is the page's user's. `sent` is the token
 * the refused call carried: a call refused alongside another finds the page renewed already, and may
 * be resent with the token the other one took.
 */
export async function renewSession(
  sent = metaContent(document, 'csrf-token'),
  load = loadSession,
): Promise<Renewal> {
  const pageUser = metaContent(document, 'user-id');
  if (!pageUser) return { renewed: false };
  const now = await load().catch(() => undefined);
  const userId = now?.userId;
  const token = now?.csrfToken;
  if (!userId || !token) return { renewed: false };
  if (userId !== pageUser) return { renewed: false, message: SIGNED_IN_AS_SOMEONE_ELSE };
  if (token === sent) return { renewed: false };
  // The page's forms post it too (delete, edit, move buttons).
  document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.setAttribute('content', token);
  for (const input of document.querySelectorAll<HTMLInputElement>('input[name="_csrf"]')) input.value = token;
  return { renewed: true };
}
