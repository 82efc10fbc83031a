import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Database } from '#infra/db/database.ts';
import { migrate } from '#infra/db/migrate.ts';
import { openEmbeddedDatabase } from '#infra/db/open-embedded.ts';
import { openPostgresDatabase } from '#infra/db/open-postgres.ts';
import { createLogger } from '#infra/logger.ts';
import { backendUrl, type BackendKind } from './environment.ts';

export interface TestDatabase extends Database {
  /** The URL of the fresh Postgres database (undefined when embedded). */
  url: string | undefined;
  drop(): Promise<void>;
}

const silent = createLogger('silent');

/** A fresh, migrated database for one test file: PGlite in memory, or a new database on the real server. */
export async function createTestDatabase(
  kind: BackendKind,
  options: { poolSize?: number; migrate?: boolean } = {},
): Promise<TestDatabase> {
  const shouldMigrate = options.migrate ?? true;
  if (kind === 'embedded') {
    const db = await openEmbeddedDatabase('memory://');
    if (shouldMigrate) await migrate(db.pool);
    return { ...db, url: undefined, drop: () => db.close() };
  }
  const testDatabaseUrl = backendUrl('postgres');
  const name = `rivals_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: testDatabaseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(testDatabaseUrl);
  url.pathname = `/${name}`;
  const db = await openPostgresDatabase(url.toString(), silent, options);
  if (shouldMigrate) await migrate(db.pool);
  return {
    ...db,
    url: url.toString(),
    async drop() {
      await db.close();
      const cleanup = new pg.Client({ connectionString: testDatabaseUrl });
      await cleanup.connect();
      await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await cleanup.end();
    },
  };
}
