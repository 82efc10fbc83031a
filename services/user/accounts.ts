import { randomUUID } from 'node:crypto';
import type { Command, Outcome } from '#events/command.ts';
import { usersStream } from '#events/streams.ts';
import type { Role } from '#events/user/fields.ts';
import { withTransaction, type Pool, type Queryable } from '#infra/db/database.ts';
import { hashPassword, verifyPassword } from '#infra/passwords.ts';

/** Sends a command and answers its outcome (through the bus from the web, directly from the CLI). */
export type Dispatch = (command: Command) => Promise<Outcome | undefined>;

export interface NewAccount {
  email: string;
  displayName: string;
  role: Role;
  password: string;
  /** Given when the request carries an idempotency key: a retry then names the same user. */
  userId?: string;
}

/**
 * The key names a user the log already has, whose password is not the one given now: nothing is changed.
 * "Another sending", not "the first": two sendings at the same moment may each store their password in
 * turn, and the one that stays is the last (helper-59).
 */
export const addedWithAnotherPassword: Outcome = {
  status: 'rejected',
  code: 'conflict',
  message:
    'This user was already added by another sending of this same form, with the password given there: the ' +
    'password you gave now was not saved. Reload the users page to see them.',
};

/** Whether the log records this user (the truth; the user list may lag behind it). */
const RECORDED = `EXISTS (SELECT 1 FROM events WHERE stream = $2 AND type = 'UserAdded' AND data->>'userId' = $1::text)`;

/**
 * Creates a user: the password hash goes to `user_credentials` (never into an event), then the
 * `AddUser` command records the user. A rejected command removes the hash it stored.
 *
 * A hash whose user the log does not record is pending: it signs no one in (sign-in finds accounts in the
 * user list), and it is left behind when a creation stops half-way (the command could not be sent, no
 * answer came, the process died). A retry with the same id completes the creation; its password replaces
 * the pending one, since the user does not exist yet (the last password given is the one the admin is
 * told about). Once the log records the user, their password is no longer replaced from here: a retry
 * with another password is refused (`addedWithAnotherPassword`). A dispatch that throws leaves the hash
 * in place: the command may still be admitted and recorded later, and a user without a password could
 * never sign in, whereas a pending hash is harmless and the retry needs it.
 */
export async function createAccount(
  pool: Pool,
  dispatch: Dispatch,
  account: NewAccount,
): Promise<{ userId: string; outcome: Outcome | undefined; storedPassword: boolean }> {
  const userId = account.userId ?? randomUUID();
  const hash = await hashPassword(account.password);
  const inserted = await pool.query(
    `INSERT INTO user_credentials (user_id, password_hash) VALUES ($1, $2) ON CONFLICT (user_id) DO NOTHING`,
    [userId, hash],
  );
  // A random id already taken: not this request (only a caller-chosen id is ever sent again).
  if (inserted.rowCount === 0 && !account.userId)
    return {
      userId,
      outcome: { status: 'rejected', code: 'conflict', message: 'This user already exists.' },
      storedPassword: false,
    };
  if (inserted.rowCount === 0 && !(await takePendingHash(pool, userId, account.password, hash)))
    return { userId, outcome: addedWithAnotherPassword, storedPassword: false };
  const outcome = await dispatch({
    type: 'AddUser',
    payload: { userId, email: account.email, displayName: account.displayName, role: account.role },
  });
  if (outcome?.status === 'rejected') {
    // Only the hash of a user the log does not record is removed: a key that names an existing user is
    // refused, and must not cost that user their password.
    await pool.query(`DELETE FROM user_credentials WHERE user_id = $1 AND NOT ${RECORDED}`, [
      userId,
      usersStream(),
    ]);
    return { userId, outcome, storedPassword: false };
  }
  // Never "done" for a password that is not the stored one: the same id sent again at the same moment
  // with another password (a second instance, a resubmitted form) may have replaced it. FOR SHARE waits
  // for such a replacement under way (`takePendingHash` holds the row until it commits).
  const stored = await storedHash(pool, userId, 'FOR SHARE');
  const storedPassword =
    stored !== undefined && (stored === hash || (await verifyPassword(account.password, stored)));
  if (outcome?.status === 'accepted' && !storedPassword)
    return { userId, outcome: addedWithAnotherPassword, storedPassword };
  return { userId, outcome, storedPassword };
}

/**
 * For an id whose hash is stored already (a retry): true when the stored hash is this password's, or was a
 * pending one (the log does not record the user) and `hash` now replaces it; false when the log records
 * the user with another password. The row is locked before the log is read, so a user recorded meanwhile
 * is seen, and the replacement commits before anyone checking the stored hash under FOR SHARE reads it.
 * The password is checked outside the transaction (a slow hash must not hold the embedded database's one
 * connection): the transaction replaces only the hash that was checked, or looks again.
 */
async function takePendingHash(pool: Pool, userId: string, password: string, hash: string): Promise<boolean> {
  for (;;) {
    const seen = await storedHash(pool, userId);
    if (seen !== undefined && (await verifyPassword(password, seen))) return true;
    const taken = await withTransaction(pool, async (client) => {
      const { rows } = await client.query<{ password_hash: string }>(
        'SELECT password_hash FROM user_credentials WHERE user_id = $1 FOR UPDATE',
        [userId],
      );
      // Replaced meanwhile by another sending of the same id: check its hash first.
      if (rows[0]?.password_hash !== seen) return 'changed';
      const recorded = await client.query<{ recorded: boolean }>(`SELECT ${RECORDED} AS recorded`, [
        userId,
        usersStream(),
      ]);
      if (recorded.rows[0]?.recorded) return false;
      // Pending, or removed by a rejection: this password is the one stored from now on.
      await client.query(
        `INSERT INTO user_credentials (user_id, password_hash) VALUES ($1, $2)
         ON CONFLICT (user_id) DO UPDATE SET password_hash = EXCLUDED.password_hash, updated_at = now()`,
        [userId, hash],
      );
      return true;
    });
    if (taken !== 'changed') return taken;
  }
}

async function storedHash(db: Queryable, userId: string, lock = ''): Promise<string | undefined> {
  const { rows } = await db.query<{ password_hash: string }>(
    `SELECT password_hash FROM user_credentials WHERE user_id = $1 ${lock}`,
    [userId],
  );
  return rows[0]?.password_hash;
}

/** What a change hears when a later one of the same user's password stored its hash first. */
export const superseded: Outcome = {
  status: 'rejected',
  code: 'conflict',
  message:
    'Another new password was set for this account at the same moment (by its user or an administrator), and it is the one kept: this one was not stored.',
};

/**
 * Sets a new password for a user the log records: an operator's reset (`users:set-password`,
 * `ResetPassword`) or the user's own change (/account, `ChangeOwnPassword`). The change is recorded first
 * (the audit lists it, and a user that does not exist, or a change by someone else, is refused there),
 * then the hash replaces the old one. Answers the command's outcome; the caller ends the sessions signed
 * in before it (`outcome.positions`). A failure between the two leaves the old password and a recorded
 * change: asking again finishes it (the CLI records it again, as it was asked again; the page's retry
 * carries the same key, so it is answered by the first outcome and stores the hash). Refused
 * (`superseded`) when a change recorded after this one stored its hash first: that one is the password.
 */
export async function setPassword(
  pool: Pool,
  dispatch: Dispatch,
  account: { userId: string; password: string },
  type: 'ResetPassword' | 'ChangeOwnPassword' = 'ResetPassword',
): Promise<Outcome | undefined> {
  const hash = await hashPassword(account.password);
  const outcome = await dispatch({ type, payload: { userId: account.userId } });
  if (outcome?.status !== 'accepted') return outcome;
  // Only over a hash set by a change recorded before this one, or by this one (its resend: the same
  // position), never a later one (migration 036): of two changes at once, the one the log records last is
  // the password, whichever stores its hash last.
  const { rowCount } = await pool.query(
    `INSERT INTO user_credentials (user_id, password_hash, set_at) VALUES ($1, $2, $3)
     ON CONFLICT (user_id) DO UPDATE
       SET password_hash = EXCLUDED.password_hash, set_at = EXCLUDED.set_at, updated_at = now()
       WHERE user_credentials.set_at IS NULL OR user_credentials.set_at <= EXCLUDED.set_at`,
    [account.userId, hash, Math.max(...outcome.positions)],
  );
  return rowCount === 0 ? superseded : outcome;
}

/**
 * Whether the stored password was replaced after the change at `position` was recorded: that change is
 * finished (its hash stored, or another stored since). False while it is recorded but its hash is not
 * stored yet (a failure between the two), which the same form sent again finishes.
 */
export async function passwordStoredSince(db: Queryable, userId: string, position: number): Promise<boolean> {
  const { rows } = await db.query<{ since: boolean }>(
    `SELECT c.updated_at > e.recorded_at AS since
     FROM user_credentials c, events e WHERE c.user_id = $1 AND e.position = $2`,
    [userId, position],
  );
  return rows[0]?.since === true;
}

export async function checkPassword(db: Queryable, userId: string, password: string): Promise<boolean> {
  const stored = await storedHash(db, userId);
  return stored ? verifyPassword(password, stored) : false;
}
