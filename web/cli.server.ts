import { Command } from 'commander';
import { ConfigError } from '#infra/config.ts';
import { StartupError } from '#infra/errors.ts';
import { log, UsageError } from './cli/cli-context.server.ts';
import { register as logCommands } from './cli/log-commands.server.ts';
import { register as replayCommand } from './cli/replay-command.server.ts';
import { register as seedCommand } from './cli/seed-command.server.ts';
import { register as usersCommand } from './cli/users-command.server.ts';

/** `npm run cli -- <command>`: the operator commands. */
const program = new Command('rivals')
  .description('Rivals operator commands')
  .showHelpAfterError()
  .configureOutput({ outputError: (text, write) => write(text) });

for (const register of [logCommands, seedCommand, usersCommand, replayCommand]) register(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  if (error instanceof UsageError || error instanceof StartupError || error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(`The command failed: ${(error as Error).message}\n`);
    log.error({ err: error }, 'command failed');
  }
  process.exit(1);
});
