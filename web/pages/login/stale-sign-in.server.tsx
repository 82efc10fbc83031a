import type { Context } from 'koa';
import { hasControlCharacters } from '#events/text.ts';
import { ForbiddenError } from '#infra/errors.ts';
import { anonTokenReplaced, type CookieNames } from '../../auth/cookies.server.ts';
import type { StaleFormAnswers } from '../../auth/csrf.server.ts';
import { isXhr, pageContext, renderHtml } from '../../render.server.tsx';
import { safeNext } from '../../routing.server.ts';
import { formValues } from '../../zod-form.server.ts';
import type { SessionUser } from '../page-context.ts';
import { LoginPage } from './login.page.tsx';

export const STALE_SIGN_IN = 'Your sign-in page was out of date. Sign in again.';

/** The email a refused sign-in form shows again: as typed, unless it cannot be shown. Never the password. */
export const keptEmail = (email: string): string => (hasControlCharacters(email) ? '' : email.slice(0, 254));

/** One spelling of an email for comparing: as sign-in reads it (NFC, trimmed), in any case. */
const emailKey = (email: string) => email.normalize('NFC').trim().toLowerCase();

/**
 * The sign-in form, sent with the token of the anonymous cookie this browser's last sign-in replaced
 * (decision 0027): a double click whose first answer had arrived, a retried POST, a second tab left on
 * the sign-in page. Its token can never match again; the form is this browser's own (the replacing cookie
 * names its token, and only our page held it), so it gets a real answer, never a sign-in:
 *
 * - signed in as the user it names: the same sign-in again; it goes where the form was going, as the
 *   first answer did (no password check, no new session, nothing counted against the sign-in limits);
 * - otherwise (signed out since, or signed in as someone else): nobody is signed in or switched; the form
 *   comes back (403) with a token that works, the email and the return kept, never the password.
 *
 * Any other token that does not match (none, another browser's, garbage) is refused as before (false).
 */
export function staleSignInForms(options: { secret: string; cookies: CookieNames }): StaleFormAnswers {
  return {
    '/login': (ctx, sent) => {
      const anon = ctx.cookies.get(options.cookies.anon) ?? '';
      if (!anonTokenReplaced(options.secret, anon, sent)) return false;
      answerStaleSignIn(ctx);
      return true;
    },
  };
}

function answerStaleSignIn(ctx: Context): void {
  const values = formValues(ctx.request.body, ['email', 'next'] as const);
  const next = safeNext(values.next);
  const user = ctx.state.user as SessionUser | undefined;
  if (user && !hasControlCharacters(values.email) && emailKey(values.email) === emailKey(user.email)) {
    ctx.redirect(next);
    return;
  }
  const error = user ? `${STALE_SIGN_IN} This browser is signed in as ${user.email} now.` : STALE_SIGN_IN;
  if (isXhr(ctx)) throw new ForbiddenError(error);
  renderHtml(
    ctx,
    <LoginPage page={pageContext(ctx)} email={keptEmail(values.email)} next={next} error={error} />,
    403,
  );
}
