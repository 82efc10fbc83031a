import { InvalidArgumentError, Option, type Command } from 'commander';
import { hasControlCharacters } from '#events/text.ts';
import { email as emailSchema, displayName, roles } from '#events/user/fields.ts';
import { oneOf, onlyOnce, readPassword, typedText } from '#infra/cli/arguments.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '#infra/passwords.ts';
import { createCommandRouter } from '#services/command-router.ts';
import { createAccount } from '#services/user/accounts.ts';
import { catchUpProjections, operator, UsageError, withDatabase } from './cli-context.server.ts';

/** `users:add`: a user with a password from stdin or a prompt. */
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
    .option('--password-stdin', 'read the password from standard input')
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
        const password = await readPassword('Password: ', PASSWORD_MAX_LENGTH).catch((error: unknown) => {
          throw error instanceof InvalidArgumentError ? new UsageError(error.message) : error;
        });
        // A browser's password field cannot send these: such a password could never sign in.
        if (hasControlCharacters(password))
          throw new UsageError(
            'The password cannot contain control characters (such as NUL, tabs or line breaks) or broken characters.',
          );
        if (password.length < PASSWORD_MIN_LENGTH)
          throw new UsageError(`The password must be at least ${PASSWORD_MIN_LENGTH} characters.`);
        if (password.length > PASSWORD_MAX_LENGTH)
          throw new UsageError(`The password must be at most ${PASSWORD_MAX_LENGTH} characters.`);
        await withDatabase('users:add', async (db, store) => {
          const route = createCommandRouter(store);
          const { outcome } = await createAccount(
            db.pool,
            (command) =>
              route({
                commandId: crypto.randomUUID(),
                correlationId: 'cli',
                actor: operator,
                at: new Date().toISOString(),
                command,
              }),
            { email: email.data, displayName: name.data, role: options.role, password },
          );
          if (outcome?.status !== 'accepted')
            throw new UsageError(outcome?.message ?? 'The user could not be added.');
          await catchUpProjections(db, store);
          console.log(`Added ${name.data} <${email.data}> as ${options.role}.`);
        });
      },
    );
}
