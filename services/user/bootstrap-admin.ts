import type { EventLogReader } from '#events/store/event-log-reader.ts';
import { systemActor } from '#events/envelope.ts';
import { usersStream } from '#events/streams.ts';
import type { Pool } from '#infra/db/database.ts';
import { randomPassword } from '#infra/passwords.ts';
import { stableUuid } from '../bootstrap/bootstrap.ts';
import type { CommandRouter } from '../command-router.ts';
import { createAccount } from './accounts.ts';

/**
 * With no users at all, creates the first admin. Returns the credentials to print once, or undefined
 * when there were users already, or another instance created the admin at the same moment (it prints
 * its own password, the one that works).
 */
export async function bootstrapAdmin(
  db: Pool,
  store: EventLogReader,
  route: CommandRouter,
  options: { email: string; password?: string; clock?: () => Date },
): Promise<{ email: string; password: string } | undefined> {
  if ((await store.readStream(usersStream())).version > 0) return undefined;
  const password = options.password ?? randomPassword();
  const at = (options.clock ?? (() => new Date()))().toISOString();
  const { outcome, storedPassword } = await createAccount(
    db,
    (command) =>
      route({ commandId: 'bootstrap:admin', correlationId: 'bootstrap', actor: systemActor, at, command }),
    {
      userId: stableUuid('bootstrap:admin'),
      email: options.email,
      displayName: 'Administrator',
      role: 'admin',
      password,
    },
  );
  // Instances starting at once on an empty database each get here with a password of their own; the same
  // command id makes them one admin, whose password is the first one stored: only that one is printed.
  return outcome?.status === 'accepted' && outcome.positions.length > 0 && storedPassword
    ? { email: options.email, password }
    : undefined;
}
