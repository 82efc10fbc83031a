import type { Database } from '#infra/db/database.ts';

/** A transaction holding a transaction id open on the Postgres cluster, as pg_stat_activity shows it. */
export interface OpenTransaction {
  pid: number;
  database: string | null;
  user: string | null;
  application: string | null;
  /** How long it has been open. */
  seconds: number | null;
  /** `idle in transaction` for one a session began and walked away from. */
  state: string | null;
}

/**
 * The oldest transactions holding a transaction id, this database's and the cluster's (one when they are
 * the same): readers of the log wait for the oldest in the whole cluster (decision 0002), and an operator
 * must find it to end it, on a cluster they may share. Empty off Postgres (the embedded database runs one
 * transaction at a time, in the process) and when the statistics cannot be read.
 */
export async function oldestOpenTransactions(db: Database): Promise<OpenTransaction[]> {
  if (db.kind !== 'postgres') return [];
  const columns = `pid, datname AS database, usename AS user, application_name AS application, state,
    extract(epoch FROM now() - xact_start)::int AS seconds
    FROM pg_stat_activity WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid()`;
  const { rows } = await db.pool
    .query<OpenTransaction>(
      `(SELECT ${columns} AND datname = current_database() ORDER BY age(backend_xid) DESC LIMIT 1)
       UNION ALL (SELECT ${columns} ORDER BY age(backend_xid) DESC LIMIT 1)`,
    )
    .catch(() => ({ rows: [] as OpenTransaction[] }));
  return rows.filter((row, i) => rows.findIndex((other) => other.pid === row.pid) === i);
}

/** One transaction in words: `pid 4242 (database "rivals", application "psql", open 95 s, idle in transaction)`. */
export function describeTransaction(t: OpenTransaction): string {
  const details = [
    t.database && `database "${t.database}"`,
    t.user && `user "${t.user}"`,
    t.application && `application "${t.application}"`,
    t.seconds !== null && `open ${t.seconds} s`,
    t.state,
  ].filter(Boolean);
  return `pid ${t.pid} (${details.join(', ')})`;
}

/** What holds the log's readers back and what to do about it (undefined: no transaction to name). */
export function describeHeldBack(oldest: readonly OpenTransaction[]): string | undefined {
  if (oldest.length === 0) return undefined;
  return `readers of the log wait for the oldest transaction in the Postgres cluster; the oldest open now: ${oldest.map(describeTransaction).join('; ')}; end it (pg_terminate_backend) or wait for it`;
}

/**
 * For /ops and `projections:status`: when committed events have waited longer than `maxSeconds` behind a
 * transaction still open, how long and which transaction; undefined otherwise (a write under way holds
 * the log for milliseconds all the time, and is not news).
 */
export async function heldBackNotice(
  db: Database,
  lags: readonly { heldBackSeconds: number }[],
  maxSeconds: number,
): Promise<string | undefined> {
  const waited = Math.max(0, ...lags.map((l) => l.heldBackSeconds));
  if (waited <= maxSeconds) return undefined;
  const named = describeHeldBack(await oldestOpenTransactions(db)) ?? 'no open transaction found any more';
  return `Held back: changes committed ${Math.round(waited)} s ago are not projected yet, because a transaction stays open (every instance waits for it); ${named}`;
}
