import { NotFoundError, ValidationError } from '#infra/errors.ts';
import { findUser, type UserRow } from '#projections/user-list/user-list.queries.ts';
import type { Context } from 'koa';
import { addFlash } from '../../auth/flash.server.ts';
import { idempotencyKey } from '../../idempotency.server.ts';
import { pageContext, renderHtml } from '../../render.server.tsx';
import { route, type RouteDef } from '../../routing.server.ts';
import { parseForm } from '../../zod-form.server.ts';
import { newPasswordTwice } from '../account/new-password.server.ts';
import { endSessionsBeforeChange, setPasswordOnce } from '../account/password-once.server.ts';
import type { SessionUser } from '../page-context.ts';
import type { AppDeps } from '../../app-deps.server.ts';
import { SetPasswordPage } from './set-password.page.tsx';

const OWN =
  'To change your own password, use Your account (/account, your name in the header): it asks for your current password first.';
const NOT_YET =
  'The password is not set yet: the server is busy and did not confirm the change in time. Enter the same password again and send this form: it finishes that change and never makes a second one.';
const NOT_YET_UNKEYED =
  'The password is not set yet: the server is busy and did not confirm the change in time. Send the form again in a moment.';
const formUsed = (name: string) =>
  `This form already set ${name}'s password, so nothing was changed now: their password is the one it set. To set another, open Set password for them again from the users list.`;

type Named = Pick<Context, 'state'> & { params: Record<string, string | undefined> };

/** The user the route names (a UUID, checked by the router), if the user list has them. */
async function namedUser(ctx: Named, deps: AppDeps): Promise<UserRow> {
  const user = await findUser(deps.db.pool, ctx.params.id ?? '');
  if (!user) throw new NotFoundError('No such user.');
  return user;
}

const isSelf = (ctx: Named) => ctx.params.id === (ctx.state.user as SessionUser).id;

export const setPasswordRoutes: RouteDef[] = [
  route('GET', '/users/:id/password', 'users.manage', async (ctx, deps) => {
    if (isSelf(ctx)) return ctx.redirect('/account');
    renderHtml(
      ctx,
      <SetPasswordPage page={pageContext(ctx)} user={await namedUser(ctx, deps)} errors={{}} />,
    );
  }),

  /**
   * Recorded first (`ResetPassword`: the audit says who set whose password), then the hash stored, then
   * every session of theirs signed in before it ended (pages and live sockets). One change per form key,
   * as on /account: a double click is answered as the first sending, a key used again for another
   * password is refused.
   */
  route('POST', '/users/:id/password', 'users.manage', async (ctx, deps) => {
    // Without the current password, your own would be one stolen session away from being taken over.
    if (isSelf(ctx)) throw new ValidationError(OWN);
    const user = await namedUser(ctx, deps);
    const rerender = (errors: Record<string, string>, status = 400, commandKey?: string) =>
      renderHtml(
        ctx,
        <SetPasswordPage page={pageContext(ctx)} user={user} errors={errors} commandKey={commandKey} />,
        status,
      );
    // A password sent twice is refused by name, not read as empty ("at least 12 characters").
    const parsed = parseForm(
      ctx.request.body,
      ['newPassword', 'repeatPassword'] as const,
      newPasswordTwice,
      'the password was not set',
    );
    if (parsed.errors) return rerender(parsed.errors);

    const outcome = await setPasswordOnce(
      ctx,
      deps,
      { userId: user.id, password: parsed.data.newPassword },
      'ResetPassword',
    );
    if (outcome === 'form-used') return rerender({ _form: formUsed(user.displayName) });
    if (outcome?.status === 'rejected') return rerender({ _form: outcome.message });
    if (!outcome) {
      // Not "received": the hash is stored only by a request that hears the change accepted (decision 0029).
      const key = idempotencyKey(ctx);
      return rerender({ _form: key ? NOT_YET : NOT_YET_UNKEYED }, 202, key);
    }
    const ended = await endSessionsBeforeChange(deps, user.id, outcome);
    deps.log.info(
      { userId: user.id, by: (ctx.state.user as SessionUser).id, endedSessions: ended },
      'password set by an admin',
    );
    addFlash(ctx, {
      kind: 'success',
      text:
        `${user.displayName}'s password is set: share it with them securely. Browsers signed in as them were signed out.` +
        (user.disabled ? ' They cannot sign in until their account is enabled.' : ''),
    });
    ctx.redirect('/users');
  }),
];
