import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withTransaction, type Pool } from './database.ts';

export const migrationsDir = fileURLToPath(new URL('../migrations/', import.meta.url));

/** Any fixed number; every instance agrees on it so only one migrates at a time. */
const MIGRATION_LOCK = 72_656_901;

export interface Migration {
  id: string;
  sql: string;
}

export async function loadMigrations(dir = migrationsDir): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => ({
      id: file.replace(/\.sql$/, ''),
      sql: await readFile(path.join(dir, file), 'utf8'),
    })),
  );
}

/**
 * Applies pending migrations in one transaction under a transaction-level advisory lock: a second
 * instance starting at the same time waits, then finds nothing left to apply. Returns the ids applied.
 */
export async function migrate(pool: Pool, migrations?: Migration[]): Promise<string[]> {
  const all = migrations ?? (await loadMigrations());
  return withTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         id text PRIMARY KEY,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const { rows } = await client.query<{ id: string }>('SELECT id FROM schema_migrations');
    const applied = new Set(rows.map((r) => r.id));
    const pending = all.filter((m) => !applied.has(m.id));
    for (const migration of pending) {
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (id) VALUES ($1)', [migration.id]);
    }
    return pending.map((m) => m.id);
  });
}
