import { z } from 'zod';
import { text } from '#events/text.ts';
import { TooManyRequestsError } from '#infra/errors.ts';
import { dummyHash, PASSWORD_MAX_LENGTH, verifyPassword } from '#infra/passwords.ts';
import { findUserByEmail } from '#projections/user-list/user-list.queries.ts';
import { checkPassword } from '#services/user/accounts.ts';
import { addFlash } from '../../auth/flash.server.ts';
import { endSession, endSessionsBeyondCap, startSession } from '../../auth/sessions.server.ts';
import { idempotencyKey } from '../../idempotency.server.ts';
import type { SessionUser } from '../page-context.ts';
import { pageContext, renderHtml } from '../../render.server.tsx';
import { route, safeNext, type RouteDef } from '../../routing.server.ts';
import { fieldErrors, fieldsNotText, formValues } from '../../zod-form.server.ts';
import { LoginPage } from './login.page.tsx';
import { keptEmail } from './stale-sign-in.server.tsx';
import { addressKey } from '../../address-key.ts';

const loginForm = z.object({
  email: text('Email').trim().min(1, 'Enter your email.').max(254, 'Email must be at most 254 characters.'),
  password: z
    .string()
    .min(1, 'Enter your password.')
    .max(PASSWORD_MAX_LENGTH, `Password must be at most ${PASSWORD_MAX_LENGTH} characters.`),
  next: z.string(),
});

const SIGN_IN_FIELDS = ['email', 'password', 'next'] as const;

/** Says so when a sign-in field came twice, as a list or as anything but text. */
function formShapeError(body: unknown): string | undefined {
  // One message for the page's one error line, naming the field (the other forms: parseForm, per field).
  const [bad] = fieldsNotText(body, SIGN_IN_FIELDS);
  return bad
    ? `The sign-in form's ${bad} field came more than once or not as text. Sign in from the page's form.`
    : undefined;
}

const INCORRECT = 'Email or password is incorrect.';

export const loginRoutes: RouteDef[] = [
  route('GET', '/login', 'public', (ctx) => {
    if (ctx.state.user) return ctx.redirect(safeNext(ctx.query.next));
    renderHtml(ctx, <LoginPage page={pageContext(ctx)} email="" next={safeNext(ctx.query.next)} />);
  }),

  /**
   * Who this browser is signed in as now, and the form token of that session: a page whose call was
   * refused looks here (web/client/session-renewal.ts). Readable by our own pages only (no CORS), like
   * the token in every page's head.
   */
  route('GET', '/session', 'public', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      userId: (ctx.state.user as SessionUser | undefined)?.id ?? null,
      csrfToken: ctx.state.csrfToken as string,
    };
  }),

  route('POST', '/login', 'public', async (ctx, deps) => {
    const values = formValues(ctx.request.body, SIGN_IN_FIELDS);
    const next = safeNext(values.next);
    // Refused before anything is counted or looked up: a field sent twice or not as text (a script, a
    // hand-made request) must not read as a wrong password, and one left out is said by name.
    const parsed = loginForm.safeParse(values);
    const refusal =
      formShapeError(ctx.request.body) ??
      (parsed.success ? undefined : Object.values(fieldErrors(parsed.error))[0]);
    if (refusal !== undefined || !parsed.success) {
      renderHtml(
        ctx,
        <LoginPage page={pageContext(ctx)} email={keptEmail(values.email)} next={next} error={refusal} />,
        400,
      );
      return;
    }
    const form = parsed.data;
    // The form's own key (a double click or a retry sends it again): one session for both (startSession).
    const key = idempotencyKey(ctx);
    // Counted as a failure now, before the password is checked: guesses sent at once all wait for it.
    const wait = await deps.loginLimiter.attempt(form.email, addressKey(ctx.ip));
    if (wait > 0) {
      throw new TooManyRequestsError(
        `Too many failed sign-ins. Try again in ${wait} second${wait === 1 ? '' : 's'}.`,
        wait,
      );
    }
    const user = form.email ? await findUserByEmail(deps.db.pool, form.email) : undefined;
    // A missing account costs a full hash too, so timing does not tell which emails exist.
    const ok = user
      ? await checkPassword(deps.db.pool, user.id, form.password)
      : await verifyPassword(form.password, dummyHash());
    if (!user || !ok || user.disabled) {
      deps.log.info(
        { email: form.email, reason: !user ? 'unknown' : user.disabled ? 'disabled' : 'password' },
        'sign-in failed',
      );
      renderHtml(
        ctx,
        <LoginPage page={pageContext(ctx)} email={form.email} next={next} error={INCORRECT} />,
        401,
      );
      return;
    }
    await deps.loginLimiter.succeeded(form.email, addressKey(ctx.ip));
    const sessionId = await startSession(ctx, deps.sessions, user.id, key);
    // The sign-in has happened either way: a cap not applied now is applied at the user's next sign-in.
    const ended = await endSessionsBeyondCap(deps.sessions, user.id, sessionId).catch((error: unknown) => {
      deps.log.warn({ err: error, userId: user.id }, 'sign-in: could not end the sessions beyond the cap');
      return 0;
    });
    deps.log.info({ userId: user.id, ...(ended > 0 ? { endedSessions: ended } : {}) }, 'signed in');
    ctx.redirect(next);
  }),

  route('POST', '/logout', 'public', async (ctx, deps) => {
    await endSession(ctx, deps.sessions);
    addFlash(ctx, { kind: 'info', text: 'You are signed out.' });
    ctx.redirect('/login');
  }),
];
