import { z } from 'zod';
import { TooManyRequestsError } from '#infra/errors.ts';
import { PASSWORD_MAX_LENGTH } from '#infra/passwords.ts';
import { checkPassword } from '#services/user/accounts.ts';
import type { Outcome } from '#events/command.ts';
import { addressKey } from '../../address-key.ts';
import { addFlash } from '../../auth/flash.server.ts';
import { startSession } from '../../auth/sessions.server.ts';
import { idempotencyKey } from '../../idempotency.server.ts';
import { pageContext, renderHtml } from '../../render.server.tsx';
import { route, type RouteDef } from '../../routing.server.ts';
import { parseForm } from '../../zod-form.server.ts';
import type { SessionUser } from '../page-context.ts';
import { AccountPage, passwordFields } from './account.page.tsx';
import { newPasswordTwice } from './new-password.server.ts';
import { earlierPasswordChange, endSessionsBeforeChange, setPasswordOnce } from './password-once.server.ts';
import { CHANGED } from './stale-password-change.server.ts';

const passwordForm = newPasswordTwice
  .safeExtend({
    currentPassword: z
      .string()
      .min(1, 'Enter your current password.')
      .max(PASSWORD_MAX_LENGTH, 'That is not your current password: it is longer than any password can be.'),
  })
  .refine((form) => form.newPassword !== form.currentPassword, {
    path: ['newPassword'],
    message: 'The new password is the one you have now: choose another.',
  });

const NOT_CURRENT = 'That is not your current password.';
const NOT_YET =
  'Your password is not changed yet: the server is busy and did not confirm the change in time. Enter the same passwords again and send this form: it finishes that change and never makes a second one.';
const NOT_YET_UNKEYED =
  'Your password is not changed yet: the server is busy and did not confirm the change in time. Send the form again in a moment.';
const FORM_USED =
  'This form already changed your password, so nothing was changed now: your password is the one it set. To change it again, enter that one as the current password below.';

export const accountRoutes: RouteDef[] = [
  route('GET', '/account', 'account.manage', (ctx) => {
    renderHtml(ctx, <AccountPage page={pageContext(ctx)} errors={{}} />);
  }),

  /**
   * The current password is checked first, counted with the sign-in attempts of this account and address
   * (guessing it here is no cheaper than at sign-in). The change is recorded (`ChangeOwnPassword`), then
   * the hash replaced, then every session signed in before it ended, this browser's included, and this
   * browser signed in again: the password changed elsewhere signs out whoever may have learned the old one.
   *
   * Sent again (a double click, a retry after a lost answer: the form's key), the current password no
   * longer matches, since the first sending changed it: a sending whose new password is the stored one
   * and whose key names an accepted change of this very request is answered as the first was.
   */
  route('POST', '/account/password', 'account.manage', async (ctx, deps) => {
    const user = ctx.state.user as SessionUser;
    const rerender = (errors: Record<string, string>) =>
      renderHtml(ctx, <AccountPage page={pageContext(ctx)} errors={errors} />, 400);
    // A password sent twice is refused by name (it read as empty: "Enter your current password."), before
    // anything is counted or checked: the refusal says nothing of the password, so it is no free guess.
    const parsed = parseForm(ctx.request.body, passwordFields, passwordForm, 'your password was not changed');
    if (parsed.errors) return rerender(parsed.errors);
    const { currentPassword, newPassword } = parsed.data;

    const address = addressKey(ctx.ip);
    const wait = await deps.loginLimiter.attempt(user.email, address);
    if (wait > 0)
      throw new TooManyRequestsError(
        `Too many wrong passwords. Try again in ${wait} second${wait === 1 ? '' : 's'}.`,
        wait,
      );
    let outcome: Outcome | undefined;
    if (await checkPassword(deps.db.pool, user.id, currentPassword)) {
      const result = await setPasswordOnce(
        ctx,
        deps,
        { userId: user.id, password: newPassword },
        'ChangeOwnPassword',
      );
      if (result === 'form-used') {
        await deps.loginLimiter.succeeded(user.email, address);
        return rerender({ _form: FORM_USED });
      }
      outcome = result;
    } else {
      // Checked only for a key that made a change: the new password is not a second guess of the stored one.
      const earlier = await earlierPasswordChange(ctx, deps);
      if (!earlier || !(await checkPassword(deps.db.pool, user.id, newPassword))) {
        deps.log.info({ userId: user.id }, 'password change: the current password was wrong');
        return rerender({ currentPassword: NOT_CURRENT });
      }
      outcome = earlier;
    }
    await deps.loginLimiter.succeeded(user.email, address);

    if (outcome?.status === 'rejected') return rerender({ _form: outcome.message });
    if (!outcome) {
      // Recorded or not (the worker may still decide it), the hash is stored only by a request that hears
      // the change accepted: not the page's usual "received", which a new form (a new key) never finishes.
      // The form comes back with its key, so sending it again finishes this change rather than making another.
      const key = idempotencyKey(ctx);
      return renderHtml(
        ctx,
        <AccountPage
          page={pageContext(ctx)}
          errors={{ _form: key ? NOT_YET : NOT_YET_UNKEYED }}
          commandKey={key}
        />,
        202,
      );
    }
    const ended = await endSessionsBeforeChange(deps, user.id, outcome);
    await startSession(ctx, deps.sessions, user.id);
    deps.log.info({ userId: user.id, endedSessions: ended }, 'password changed');
    addFlash(ctx, { kind: 'success', text: CHANGED });
    ctx.redirect('/account');
  }),
];
