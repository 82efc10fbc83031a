import pg from 'pg';
import type { NotifyChannel } from './notify-channels.ts';

export type Pool = pg.Pool;
export type Client = pg.PoolClient;
/** Anything that runs a query: the pool, or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'>;

/** Subscribes to Postgres notifications; resolves to an unsubscribe function. */
export interface Notifier {
  listen(channel: NotifyChannel, onMessage: (payload: string) => void): Promise<() => Promise<void>>;
}

export interface Database {
  readonly kind: 'embedded' | 'postgres';
  /** Where the data lives, without secrets, for logs and messages. */
  readonly describe: string;
  readonly pool: Pool;
  readonly notifier: Notifier;
  /** Rejects, saying what to do, when the files behind the database are gone (embedded: DATA_DIR removed). */
  checkStorage?: () => Promise<void>;
  close(): Promise<void>;
}

/**
 * Type parsers for every pool we open: int8 (positions, counts) as a JS number. Positions stay far below
 * 2^53; passing this per pool avoids mutating pg's global parser table.
 */
export const typeParsers: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown => {
    if (oid === 20) return (value: string) => Number(value);
    return format ? pg.types.getTypeParser(oid, format) : pg.types.getTypeParser(oid);
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * Runs `work` in one transaction on one client. The embedded pool has a single connection, so `work`
 * must use only the client it is given, never the pool.
 */
export async function withTransaction<T>(pool: Pool, work: (client: Client) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // pg-pool listens for errors only on idle clients: one that dies while checked out (a server restart)
  // would emit an unhandled 'error' and take the process down. The failing query rejects anyway.
  let broken: Error | undefined;
  const onError = (error: Error) => (broken = error);
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    if (isConnectionError(error)) broken ??= error as Error;
    else await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.off('error', onError);
    // A broken client is destroyed, not put back for the next caller to fail on.
    client.release(broken);
  }
}

/**
 * A client kept checked out beyond one statement (an export's snapshot, a rebuild's session lock). pg-pool
 * listens for errors only on idle clients: one that died checked out (Postgres restarted, its backend
 * terminated) emitted an unhandled 'error' that took the process down with a stack trace. Here the error
 * is heard (`onLost`; the next query on it rejects anyway), and `release` destroys a broken client
 * instead of giving it back to the pool.
 */
export async function checkOut(
  pool: Pick<Pool, 'connect'>,
  onLost?: (error: Error) => void,
): Promise<{ client: Client; release: () => void }> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken ??= error;
    onLost?.(error);
  };
  client.on('error', onError);
  return {
    client,
    release: () => {
      client.off('error', onError);
      client.release(broken);
    },
  };
}

/** Postgres error codes we act on. */
export const pgErrorCode = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;

/**
 * The files behind the database are gone (embedded: DATA_DIR removed while Rivals ran). PGlite still
 * answers from memory and even "stores" into the files it holds open, which nobody will read again: no
 * write may be accepted. The message is for whoever runs Rivals (it names the folder): logs and /readyz.
 */
export class StorageMissingError extends Error {
  override readonly name = 'StorageMissingError';
}

/**
 * Whether the database cannot do any work right now, for a reason that is not the request's:
 * unreachable (`isConnectionError`), out of a resource (class 53: the disk is full, out of memory, too
 * many connections), or its own files missing or unreadable (class 58, `StorageMissingError`). Nothing
 * was stored; the same request may be sent again once someone has seen to it. Unlike a connection error,
 * the connection itself is sound and stays in use.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof StorageMissingError || isConnectionError(error)) return true;
  const code = pgErrorCode(error);
  return code !== undefined && (code.startsWith('53') || code.startsWith('58'));
}

/**
 * Whether the database refused a write for a reason of its own, which the next write will likely meet
 * too: out of a resource (class 53: its disk full, out of memory or connections) or its files missing or
 * unreadable (class 58, `StorageMissingError`). What `/readyz`'s "database (writes)" counts. Not a lost
 * connection (the `database` check finds that itself, each time it is asked), nor anything the write
 * brought on itself: a constraint violation, a conflict, a serialization failure, a deadlock.
 */
export const isRefusedWrite = (error: unknown): boolean =>
  isDatabaseUnavailable(error) && !isConnectionError(error);

/** Why the database cannot take work, in words for the person whose change was not saved. */
export function unavailableReason(error: unknown): string {
  if (error instanceof StorageMissingError) return "the server's data folder is missing";
  const code = pgErrorCode(error);
  if (code === '53100') return "the server's disk is full";
  if (code?.startsWith('53')) return 'the database is out of memory or connections';
  return code?.startsWith('58') ? 'the database cannot read its files' : 'the database is unavailable';
}

/**
 * Whether an error means "the database cannot be reached right now" rather than "this query is wrong":
 * such work waits and tries again instead of counting as a failure of the command.
 */
export function isConnectionError(error: unknown): boolean {
  const code = pgErrorCode(error);
  // 08: connection exceptions; 57P01-03: admin shutdown, crash shutdown, cannot connect now.
  if (code && (code.startsWith('08') || ['57P01', '57P02', '57P03'].includes(code))) return true;
  const message = error instanceof Error ? error.message : '';
  return /ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|the database system is (starting up|shutting down)/i.test(
    message,
  );
}
