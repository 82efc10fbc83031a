import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout } from 'node:timers/promises';
import { withTransaction, type Client, type Pool } from './database.ts';

export const migrationsDir = fileURLToPath(new URL('../migrations/', import.meta.url));

/** Any fixed number; every instance agrees on it so only one migrates at a time. */
const MIGRATION_LOCK = 72_656_901;
/** How often a start waiting for another instance's migration looks again (and checks for a stop). */
const LOCK_RETRY_MS = 200;

export interface MigrateOptions {
  /** The migrations to apply; by default those in `infra/migrations/`. */
  migrations?: Migration[];
  /** Told once when another instance holds the migration lock and this one waits for it. */
  onWait?: () => void;
  /** Throws to give up the wait (a stop asked for meanwhile); nothing has been applied by then. */
  stopIfAsked?: () => void;
}

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
 * The wait is a poll, not a blocking lock call, so that it says it waits and a stop asked for meanwhile
 * ends it (a blocked `pg_advisory_xact_lock` held a stopping server for as long as the other migration
 * ran, or forever behind a session that never committed).
 */
export async function migrate(pool: Pool, options: MigrateOptions = {}): Promise<string[]> {
  const all = options.migrations ?? (await loadMigrations());
  return withTransaction(pool, async (client) => {
    await lockOrWait(client, options);
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

async function lockOrWait(client: Client, { onWait, stopIfAsked }: MigrateOptions): Promise<void> {
  for (let waited = false; ; waited = true) {
    const { rows } = await client.query<{ locked: boolean }>(
      'SELECT pg_try_advisory_xact_lock($1) AS locked',
      [MIGRATION_LOCK],
    );
    if (rows[0]?.locked) return;
    if (!waited) onWait?.();
    stopIfAsked?.();
    await setTimeout(LOCK_RETRY_MS);
  }
}
