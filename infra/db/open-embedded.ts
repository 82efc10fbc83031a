import path from 'node:path';
import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import pg from 'pg';
import { typeParsers, type Database, type Notifier } from './database.ts';

/**
 * Opens the embedded Postgres (PGlite) in `<dataDir>/pgdata`, or in memory for `memory://`.
 * The pool has exactly one connection; see `withTransaction`.
 */
export async function openEmbeddedDatabase(dataDir: string): Promise<Database> {
  const inMemory = dataDir.startsWith('memory://');
  const location = inMemory ? dataDir : path.resolve(dataDir, 'pgdata');
  if (!inMemory) await mkdir(location, { recursive: true });
  const pglite = await PGlite.create(location, { extensions: { pg_trgm } });
  const pool = new pg.Pool({ ...createPgConfig(pglite), types: typeParsers });
  pool.on('error', () => undefined);
  // pg-pool destroys the client of any query that fails (a unique violation, a bad search) and opens a
  // new one. Over PGlite that new client shares the one backend with whatever is queued behind it, and
  // the swap confused the protocol of concurrent queries ("unexpected commandComplete message"). A failed
  // query leaves PGlite's session usable, so the one client is kept.
  const query = (async (...args: Parameters<pg.Pool['query']>) => {
    const client = await pool.connect();
    try {
      return await (client.query as (...a: unknown[]) => Promise<unknown>)(...args);
    } finally {
      client.release();
    }
  }) as pg.Pool['query'];
  pool.query = query;

  // PGlite's own listen sees every notification; the node-postgres adapter would miss them.
  const notifier: Notifier = {
    async listen(channel, onMessage) {
      const unsubscribe = await pglite.listen(channel, onMessage);
      return async () => unsubscribe();
    },
  };

  return {
    kind: 'embedded',
    describe: inMemory ? 'embedded Postgres in memory' : `embedded Postgres in ${location}`,
    pool,
    notifier,
    async close() {
      await pool.end();
      await pglite.close();
    },
  };
}
