import type { Database } from '#infra/db/database.ts';

/** The log's append lock, as `pg_locks` shows it (`pg_advisory_xact_lock_shared(classid, objid)`, migration 031). */
const appendLock = { classid: 1380537921, objid: 1 };

/** A transaction that may write events, still open, as pg_stat_activity shows it. */
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
 * The oldest transactions that hold the log's append lock (they may still write events), the only ones
 * readers of the log wait for (decision 0028): an operator must find one left open to end it. Empty off
 * Postgres (the embedded database runs one transaction at a time, in the process) and when the
 * statistics cannot be read.
 */
export async function oldestOpenTransactions(db: Database): Promise<OpenTransaction[]> {
  if (db.kind !== 'postgres') return [];
  const { rows } = await db.pool
    .query<OpenTransaction>(
      `SELECT a.pid, a.datname AS database, a.usename AS user, a.application_name AS application, a.state,
              extract(epoch FROM now() - a.xact_start)::int AS seconds
       FROM pg_stat_activity a
       -- With an id: a writer that has not written yet holds nothing back (its id will be newer).
       WHERE a.pid <> pg_backend_pid() AND a.datname = current_database() AND a.backend_xid IS NOT NULL
         AND EXISTS (SELECT 1 FROM pg_locks l
                     WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.database = a.datid
                       AND l.classid = ${appendLock.classid} AND l.objid = ${appendLock.objid} AND l.objsubid = 2)
       ORDER BY a.xact_start LIMIT 1`,
    )
    .catch(() => ({ rows: [] as OpenTransaction[] }));
  return rows;
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
  return `readers of the log wait for transactions that write to it; the oldest open now: ${oldest.map(describeTransaction).join('; ')}; end it (pg_terminate_backend) or wait for it`;
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
