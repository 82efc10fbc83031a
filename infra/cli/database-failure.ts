import { isConnectionError, isDatabaseUnavailable, unavailableReason } from '#infra/db/database.ts';

/**
 * What to tell the operator when the database went away or refused work while a command ran (a restart,
 * a failover, its disk full): not a fault of the command, so one line with the database's words and what
 * to do, or undefined for any other failure. It said "The command failed: Client has encountered a
 * connection error and is not queryable" and logged the driver's stack trace after it.
 */
export function databaseFailure(error: unknown): string | undefined {
  if (!isDatabaseUnavailable(error)) return undefined;
  const words = error instanceof Error ? error.message : String(error);
  return isConnectionError(error)
    ? `The command did not finish: the connection to the database was lost (${words}). Check that Postgres is running, then run the command again.`
    : `The command did not finish: ${unavailableReason(error)} (${words}). Run it again once the database can take work.`;
}
