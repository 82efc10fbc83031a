import { randomBytes } from 'node:crypto';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { buildAssets } from '#infra/build/build.ts';
import type { Database } from '#infra/db/database.ts';
import { migrate } from '#infra/db/migrate.ts';
import { openPostgresDatabase } from '#infra/db/open-postgres.ts';
import { createLogger } from '#infra/logger.ts';

/** The repository root (where `web/main.server.ts` lives). */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

export const silentLog = createLogger('silent');

/** The real services: Postgres 15 and Redis 7 on this machine unless told otherwise. */
export const postgresUrl =
  process.env.BENCH_DATABASE_URL ||
  process.env.TEST_DATABASE_URL ||
  'postgres://postgres@127.0.0.1:5432/postgres';
export const redisUrl = process.env.BENCH_REDIS_URL || process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

export const uniqueSuffix = () => `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;

export interface ScratchDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** An empty database of its own on the real server (nothing migrated), dropped by `drop()`. */
export async function createScratchDatabase(label = 'bench'): Promise<ScratchDatabase> {
  const name = `rivals_${label}_${uniqueSuffix()}`.replace(/[^a-z0-9_]/g, '_');
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** A fresh, migrated Postgres database with the app's pool settings; `drop()` closes and removes it. */
export async function openScratchPostgres(
  options: { poolSize?: number; label?: string } = {},
): Promise<Database & { url: string; drop(): Promise<void> }> {
  const scratch = await createScratchDatabase(options.label);
  const db = await openPostgresDatabase(scratch.url, silentLog, { poolSize: options.poolSize });
  await migrate(db.pool);
  return {
    ...db,
    url: scratch.url,
    async drop() {
      await db.close().catch(() => undefined);
      await scratch.drop();
    },
  };
}

/**
 * A migrated database of that name, created if missing and kept (for benchmarks whose seeding is the
 * slow part); `close()` only closes the pool.
 */
export async function openKeptPostgres(name: string): Promise<Database> {
  const exists = await admin((c) => c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]));
  if (exists.rowCount === 0) await admin((c) => c.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`));
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  const db = await openPostgresDatabase(url.toString(), silentLog);
  await migrate(db.pool);
  return db;
}

export const assetsDir = path.join(repoRoot, 'dist/assets');

/**
 * The browser bundle the server needs at start. Built once per benchmark run: `tests/bench/run.ts`
 * builds it and sets BENCH_ASSETS_BUILT so the scripts it starts do not rebuild (the build empties
 * dist/assets first, which a server of someone else's running test could notice).
 */
export async function ensureAssets(): Promise<void> {
  if (process.env.BENCH_ASSETS_BUILT === '1') {
    const built = await access(path.join(assetsDir, 'manifest.json')).then(
      () => true,
      () => false,
    );
    if (built) return;
  }
  await buildAssets();
  process.env.BENCH_ASSETS_BUILT = '1';
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
