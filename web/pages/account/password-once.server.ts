import type { Outcome } from '#events/command.ts';
import { checkPassword, passwordStoredSince, setPassword } from '#services/user/accounts.ts';
import type { Context } from 'koa';
import type { AppDeps } from '../../app-deps.server.ts';
import { endSessionsSignedInBefore } from '../../auth/sessions.server.ts';
import { dispatchAndWaitVisible, recallChange } from '../../commands.server.ts';

type Deps = Pick<AppDeps, 'db' | 'gateway' | 'watcher'>;
type Accepted = Extract<Outcome, { status: 'accepted' }>;

/**
 * The accepted change this form's key made before, if it did (the same key and request): the request is
 * its resend. Password fields are not part of a request's digest, so a resend with other passwords is
 * found too, and the caller decides what it may do.
 */
export async function earlierPasswordChange(ctx: Context, deps: Deps): Promise<Accepted | undefined> {
  const earlier = await recallChange(ctx, deps, []);
  return earlier?.outcome?.status === 'accepted' ? earlier.outcome : undefined;
}

/**
 * Sets a user's password as one change per form key (decision 0029): the change recorded (`type`), then the
 * hash stored. A resend of a finished change stores nothing: sent twice at once (a double click), its
 * password is the one stored and it is answered as the first; with another password it is the key used
 * again for another change (a page kept open, a script), answered `'form-used'`: storing it would set a
 * password with no change recorded for it. A resend of a change recorded but not finished (its hash not
 * stored: a failure between the two) finishes it, as one change (the same key is the same command).
 */
export async function setPasswordOnce(
  ctx: Context,
  deps: Deps,
  account: { userId: string; password: string },
  type: 'ResetPassword' | 'ChangeOwnPassword',
): Promise<Outcome | undefined | 'form-used'> {
  const earlier = await earlierPasswordChange(ctx, deps);
  if (earlier && (await passwordStoredSince(deps.db.pool, account.userId, Math.max(...earlier.positions))))
    return (await checkPassword(deps.db.pool, account.userId, account.password)) ? earlier : 'form-used';
  return setPassword(
    deps.db.pool,
    async (command) => (await dispatchAndWaitVisible(ctx, deps, command, [])).outcome,
    account,
    type,
  );
}

/**
 * Ends the user's sessions signed in before an accepted password change: whoever knew the old password is
 * signed out, a sign-in with the new one stays. Their live sockets close on the user feed's signal for the
 * change, which may have come before these sessions ended (the projection is quick, the request was not):
 * they would re-check too early, find their session still there and stay open until the next periodic
 * re-check, so they are told again once the sessions are gone. Answers how many ended.
 */
export async function endSessionsBeforeChange(
  deps: Pick<AppDeps, 'db' | 'sessions'>,
  userId: string,
  change: Accepted,
): Promise<number> {
  const ended = await endSessionsSignedInBefore(deps.db.pool, userId, Math.max(...change.positions));
  if (ended > 0) await deps.sessions.signals?.publish({ kind: 'user-changed', userId });
  return ended;
}
