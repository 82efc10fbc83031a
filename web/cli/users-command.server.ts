import { InvalidArgumentError, Option, type Command } from 'commander';
import { hasControlCharacters } from '#events/text.ts';
import { email as emailSchema, displayName, roles } from '#events/user/fields.ts';
import { oneOf, onlyOnce, readPassword, typedText } from '#infra/cli/arguments.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '#infra/passwords.ts';
import { createCommandRouter } from '#services/command-router.ts';
import { loadState } from '#services/decide-and-append.ts';
import { createAccount, setPassword, type Dispatch } from '#services/user/accounts.ts';
import { usersDecider } from '#services/user/users.ts';
import { usersStream } from '#events/streams.ts';
import type { EventStore } from '#events/store/event-store.ts';
import { endSessionsSignedInBefore } from '../auth/sessions.server.ts';
import { catchUpProjections, operator, UsageError, withDatabase } from './cli-context.server.ts';

/**
 * The password from standard input (`--password-stdin`) or a prompt, refused with what to change when
 * sign-in could never take it.
 */
async function operatorPassword(fromStdin: boolean): Promise<string> {
  const password = await readPassword('Password: ', PASSWORD_MAX_LENGTH, { fromStdin }).catch(
    (error: unknown) => {
      throw error instanceof InvalidArgumentError ? new UsageError(error.message) : error;
    },
  );
  // A browser's password field cannot send these: such a password could never sign in.
  if (hasControlCharacters(password))
    throw new UsageError(
      'The password cannot contain control characters (such as NUL, tabs or line breaks) or broken characters.',
    );
  if (password.length < PASSWORD_MIN_LENGTH)
    throw new UsageError(`The password must be at least ${PASSWORD_MIN_LENGTH} characters.`);
  if (password.length > PASSWORD_MAX_LENGTH)
    throw new UsageError(`The password must be at most ${PASSWORD_MAX_LENGTH} characters.`);
  return password;
}

/** Commands decided here, as the operator, without the bus (the CLI is its own worker). */
function operatorDispatch(store: EventStore): Dispatch {
  const route = createCommandRouter(store);
  return (command) =>
    route({
      commandId: crypto.randomUUID(),
      correlationId: 'cli',
      actor: operator,
      at: new Date().toISOString(),
      command,
    });
}

/** `users:add` and `users:set-password`: passwords from stdin or a prompt. */
export function register(program: Command): void {
  program
    .command('users:add')
    .description('add a user; the password is read from stdin (--password-stdin) or prompted for')
    .requiredOption('--email <email>', 'sign-in email', onlyOnce(typedText))
    .requiredOption('--name <name>', 'display name', onlyOnce(typedText))
    .addOption(
      new Option('--role <role>', 'viewer, editor or admin')
        .argParser(onlyOnce(oneOf(roles)))
        .makeOptionMandatory(),
    )
    .option('--password-stdin', 'read the password from standard input (to its end), with no prompt')
    .action(
      async (options: {
        email: string;
        name: string;
        role: (typeof roles)[number];
        passwordStdin?: boolean;
      }) => {
        const email = emailSchema.safeParse(options.email);
        if (!email.success) throw new UsageError(`--email: ${email.error.issues[0]?.message}`);
        const name = displayName.safeParse(options.name);
        if (!name.success) throw new UsageError(`--name: ${name.error.issues[0]?.message}`);
        const password = await operatorPassword(options.passwordStdin === true);
        await withDatabase('users:add', async (db, store) => {
          const { outcome } = await createAccount(db.pool, operatorDispatch(store), {
            email: email.data,
            displayName: name.data,
            role: options.role,
            password,
          });
          if (outcome?.status !== 'accepted')
            throw new UsageError(outcome?.message ?? 'The user could not be added.');
          await catchUpProjections(db, store);
          console.log(`Added ${name.data} <${email.data}> as ${options.role}.`);
        });
      },
    );

  program
    .command('users:set-password')
    .description(
      "set a user's password (read from stdin with --password-stdin, or prompted for); signs out their sessions",
    )
    .requiredOption('--email <email>', 'the sign-in email of the user', onlyOnce(typedText))
    .option('--password-stdin', 'read the password from standard input (to its end), with no prompt')
    .action(async (options: { email: string; passwordStdin?: boolean }) => {
      const email = emailSchema.safeParse(options.email);
      if (!email.success) throw new UsageError(`--email: ${email.error.issues[0]?.message}`);
      const password = await operatorPassword(options.passwordStdin === true);
      await withDatabase('users:set-password', async (db, store) => {
        const { state } = await loadState(store, usersStream(), usersDecider);
        const userId = state.idByEmail.get(email.data);
        if (!userId) throw new UsageError(`--email: there is no user with the email ${email.data}.`);
        const outcome = await setPassword(db.pool, operatorDispatch(store), { userId, password });
        if (outcome?.status !== 'accepted')
          throw new UsageError(outcome?.message ?? 'The password could not be set.');
        const ended = await endSessionsSignedInBefore(db.pool, userId, Math.max(...outcome.positions));
        await catchUpProjections(db, store);
        console.log(
          `Set a new password for <${email.data}>; ${ended === 1 ? '1 session' : `${ended} sessions`} signed out.`,
        );
      });
    });
}
