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
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Postgres error codes we act on. */
export const pgErrorCode = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
