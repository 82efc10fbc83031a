import type { Queryable } from '#infra/db/database.ts';
import { checkPassword } from '#services/user/accounts.ts';
import { addressKey } from '../../address-key.ts';
import { addFlash } from '../../auth/flash.server.ts';
import type { LoginLimiter } from '../../auth/login-limiter.server.ts';
import type { StaleFormAnswers } from '../../auth/csrf.server.ts';
import { idempotencyKey } from '../../idempotency.server.ts';
import { isXhr } from '../../render.server.tsx';
import { formValues } from '../../zod-form.server.ts';
import type { SessionUser } from '../page-context.ts';

export const CHANGED_BEFORE =
  'Your password was changed: this same form was sent before, and that sending changed it. This browser was signed out with the old password: sign in with the new one.';
export const CHANGED = 'Your password is changed. Browsers signed in as you elsewhere are signed out.';

/** The user whose own password change the command with this id recorded, if it did. */
async function changedBy(
  db: Queryable,
  commandId: string,
): Promise<{ id: string; email: string } | undefined> {
  const { rows } = await db.query<{ id: string; email: string }>(
    `SELECT u.id, u.email
     FROM command_outcomes o
     JOIN events e ON e.position = (o.outcome->'positions'->>0)::bigint
     JOIN user_list u ON u.id = (e.data->>'userId')::uuid
     WHERE o.command_id = $1 AND o.outcome->>'status' = 'accepted' AND e.type = 'UserPasswordChanged'`,
    [commandId],
  );
  return rows[0];
}

/**
 * The password form sent again after its first sending went through: that sending ended every session
 * signed in before it, this browser's old one included, so a retry of it (its answer lost, a double click)
 * arrives signed out, or with a form token of the old session. Without this it was told "Your session has
 * ended …, so nothing was changed", which is false: the password had changed. When the form's key names
 * a recorded change of a user's own password, and the new password it carries is that user's stored one,
 * it is answered with what happened: signed in (as that user) back to /account as the first answer did,
 * signed out to the sign-in page, told to use the new password. Nothing else is answered here (false):
 * every other stale form gets the usual refusal, and nothing is ever changed on a stale form's word.
 */
export function stalePasswordChangeForms(db: Queryable, limiter: LoginLimiter): StaleFormAnswers {
  return {
    '/account/password': async (ctx) => {
      if (isXhr(ctx)) return false;
      let key: string | undefined;
      try {
        key = idempotencyKey(ctx);
      } catch {
        return false;
      }
      const { newPassword } = formValues(ctx.request.body, ['newPassword'] as const);
      if (!key || !newPassword) return false;
      const changed = await changedBy(db, key);
      const user = ctx.state.user as SessionUser | undefined;
      if (!changed || (user && user.id !== changed.id)) return false;
      // A check of the stored password, answered to whoever holds the key: counted like a sign-in.
      const address = addressKey(ctx.ip);
      if ((await limiter.attempt(changed.email, address)) > 0) return false;
      if (!(await checkPassword(db, changed.id, newPassword))) return false;
      await limiter.succeeded(changed.email, address);
      addFlash(ctx, { kind: 'success', text: user ? CHANGED : CHANGED_BEFORE });
      ctx.redirect(user ? '/account' : '/login?next=%2Faccount');
      return true;
    },
  };
}
