import { isConnectionError, isDatabaseUnavailable, unavailableReason } from '#infra/db/database.ts';

/**
 * The database went away while a command ran that is not safe to run again as it was (seed adds as many
 * competitors again, it does not resume): `nextStep` says what to do instead, after the database is back.
 */
export class StoppedByDatabase extends Error {
  constructor(
    readonly lost: unknown,
    readonly nextStep: string,
  ) {
    super(lost instanceof Error ? lost.message : String(lost), { cause: lost });
  }
}

/**
 * What to tell the operator when the database went away or refused work while a command ran (a restart,
 * a failover, its disk full): not a fault of the command, so one line with the database's words and what
 * to do, or undefined for any other failure. It said "The command failed: Client has encountered a
 * connection error and is not queryable" and logged the driver's stack trace after it. What to do is to
 * run the command again, unless the command said otherwise (`StoppedByDatabase`).
 */
export function databaseFailure(error: unknown): string | undefined {
  const [lost, nextStep] =
    error instanceof StoppedByDatabase ? [error.lost, error.nextStep] : [error, undefined];
  if (!isDatabaseUnavailable(lost)) return undefined;
  const words = lost instanceof Error ? lost.message : String(lost);
  if (isConnectionError(lost))
    return `The command did not finish: the connection to the database was lost (${words}). Check that Postgres is running, then ${nextStep ?? 'run the command again'}.`;
  const reason = `The command did not finish: ${unavailableReason(lost)} (${words}).`;
  return nextStep
    ? `${reason} Once the database can take work, ${nextStep}.`
    : `${reason} Run it again once the database can take work.`;
}
