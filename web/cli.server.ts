import { Command } from 'commander';
import { databaseFailure } from '#infra/cli/database-failure.ts';
import { ConfigError } from '#infra/config.ts';
import { writeFailure } from '#infra/cli/output-file.ts';
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

/**
 * Output that cannot be written was an uncaught 'error' event: a stack trace, and a command stopped
 * halfway. A reader that went away (`| head`) had what it wanted: the command finishes quietly. Any
 * other failure (a full disk) fails the command with one line. Standard error has nowhere to say so.
 */
let readerGone = false;
let outputFailed: string | undefined;
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (readerGone || outputFailed !== undefined) return;
  if (error.code === 'EPIPE') readerGone = true;
  else outputFailed = writeFailure(error);
});
process.stderr.on('error', () => undefined);
// Said on the way out: the 'error' event may come after the command has already returned.
process.on('exit', () => {
  if (outputFailed === undefined) return;
  process.stderr.write(`Cannot write standard output: ${outputFailed}.\n`);
  process.exitCode = 1;
});

program.parseAsync(process.argv).catch((error: unknown) => {
  // A command that failed because its output did is said once, on exit (above).
  if (outputFailed !== undefined) process.exit(1);
  const lost = databaseFailure(error);
  if (error instanceof UsageError || error instanceof StartupError || error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
  } else if (lost) {
    process.stderr.write(`${lost}\n`);
    log.debug({ err: error }, 'command stopped by the database');
  } else {
    process.stderr.write(`The command failed: ${(error as Error).message}\n`);
    log.error({ err: error }, 'command failed');
  }
  process.exit(1);
});
