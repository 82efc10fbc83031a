import { randomUUID } from 'node:crypto';
import type { Command, Outcome } from '#events/command.ts';
import type { Role } from '#events/user/fields.ts';
import type { Queryable } from '#infra/db/database.ts';
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
 * Creates a user: the password hash goes to `user_credentials` (never into an event), then the
 * `AddUser` command records the user. A rejected command (say, the email is taken) removes the hash it stored.
 */
export async function createAccount(
  db: Queryable,
  dispatch: Dispatch,
  account: NewAccount,
): Promise<{ userId: string; outcome: Outcome | undefined; storedPassword: boolean }> {
  const userId = account.userId ?? randomUUID();
  const hash = await hashPassword(account.password);
  const inserted = await db.query(
    `INSERT INTO user_credentials (user_id, password_hash) VALUES ($1, $2) ON CONFLICT (user_id) DO NOTHING`,
    [userId, hash],
  );
  // With a caller-chosen id, an existing row is this same request retried: its command answers.
  if (inserted.rowCount === 0 && !account.userId)
    return {
      userId,
      outcome: { status: 'rejected', code: 'conflict', message: 'This user already exists.' },
      storedPassword: false,
    };
  const outcome = await dispatch({
    type: 'AddUser',
    payload: { userId, email: account.email, displayName: account.displayName, role: account.role },
  });
  // Only a hash this call stored is removed: with a caller-chosen id, an existing row may be another
  // user's (a key that names an existing user is refused, and must not cost that user their password).
  if (outcome?.status === 'rejected' && inserted.rowCount === 1)
    await db.query('DELETE FROM user_credentials WHERE user_id = $1', [userId]);
  // False when the row was there already: this same request retried, or another instance creating the
  // same user at the same moment (the first admin) whose password is the one stored.
  return { userId, outcome, storedPassword: inserted.rowCount === 1 };
}

export async function checkPassword(db: Queryable, userId: string, password: string): Promise<boolean> {
  const { rows } = await db.query<{ password_hash: string }>(
    'SELECT password_hash FROM user_credentials WHERE user_id = $1',
    [userId],
  );
  const stored = rows[0]?.password_hash;
  return stored ? verifyPassword(password, stored) : false;
}
