import type { Queryable } from '#infra/db/database.ts';
import { shadowTables, type Projection } from '../projection.ts';

/**
 * Shadow tables for a blue-green rebuild. Every name here comes from a projection's own `tables` list
 * or from the catalog entries of those tables, never from input.
 */

const SUFFIX = '__shadow';

/** Whether every shadow table of the projection exists (a rebuild can resume into them). */
export async function shadowExists(db: Queryable, projection: Projection): Promise<boolean> {
  const shadow = shadowTables(projection);
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM pg_class WHERE relname = ANY($1::text[]) AND relkind = $2',
    [projection.tables.map((t) => shadow[t]), 'r'],
  );
  return rows[0]?.n === projection.tables.length;
}

/**
 * Creates empty shadow tables with the live columns, defaults, generated columns, checks and keys
 * (primary and unique: the writers' upserts need them), but none of the secondary indexes: those are
 * built once, at the end (`shadowIndexes`). Autovacuum stays off them while they fill: it would scan
 * tables nobody reads yet, competing with the rebuild for the same cores; they are analyzed once
 * their indexes are built, and the swap turns autovacuum back on.
 */
export async function createShadow(db: Queryable, projection: Projection): Promise<void> {
  const shadow = shadowTables(projection);
  await dropShadowPageIndexes(db, projection);
  for (const table of projection.tables) {
    await db.query(`DROP TABLE IF EXISTS ${shadow[table]}`);
    await db.query(
      `CREATE TABLE ${shadow[table]} (LIKE ${table} INCLUDING DEFAULTS INCLUDING GENERATED INCLUDING CONSTRAINTS INCLUDING STORAGE)
       WITH (autovacuum_enabled = false)`,
    );
    const { rows } = await db.query<{ name: string; definition: string }>(
      `SELECT conname AS name, pg_get_constraintdef(oid) AS definition FROM pg_constraint
       WHERE conrelid = $1::regclass AND contype IN ('p', 'u') ORDER BY conname`,
      [table],
    );
    for (const key of rows) {
      await db.query(`ALTER TABLE ${shadow[table]} ADD CONSTRAINT ${key.name}${SUFFIX} ${key.definition}`);
    }
  }
}

export interface ShadowIndex {
  /** The live table it belongs to. */
  table: string;
  name: string;
  /** `CREATE INDEX IF NOT EXISTS … ON <table>__shadow …`. */
  sql: string;
  /** The index method: a trigram `gin` costs several times a `btree` of the same table. */
  method: string;
}

/** The live table's indexes that back no constraint, as `CREATE INDEX` statements for its shadow. */
async function secondaryIndexes(db: Queryable, table: string): Promise<ShadowIndex[]> {
  const { rows } = await db.query<{ name: string; definition: string; method: string }>(
    `SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition, am.amname AS method
     FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
     WHERE i.indrelid = $1::regclass
       AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
     ORDER BY c.relname`,
    [table],
  );
  return rows.map((r) => {
    const match = /^CREATE (UNIQUE )?INDEX \S+ ON (?:ONLY )?\S+ (USING .*)$/.exec(r.definition);
    if (!match) throw new Error(`cannot read the definition of index ${r.name}: ${r.definition}`);
    // A name left by an older rebuild may still carry the suffix; the shadow's gets exactly one.
    const name = `${r.name.replace(/__shadow$/, '')}${SUFFIX}`;
    return {
      table,
      name,
      sql: `CREATE ${match[1] ?? ''}INDEX IF NOT EXISTS ${name} ON ${table}${SUFFIX} ${match[2]}`,
      method: r.method,
    };
  });
}

/** Every secondary index the projection's shadow tables still need (see `buildShadowIndexes`). */
export async function shadowIndexes(db: Queryable, projection: Projection): Promise<ShadowIndex[]> {
  const all: ShadowIndex[] = [];
  for (const table of projection.tables) all.push(...(await secondaryIndexes(db, table)));
  return all;
}

/** Pages of a shadow table: how its index builds are ordered (the biggest first). */
export async function shadowPages(db: Queryable, table: string): Promise<number> {
  const { rows } = await db.query<{ pages: number }>(
    'SELECT (pg_relation_size($1::regclass) / 8192)::int AS pages',
    [`${table}${SUFFIX}`],
  );
  return rows[0]?.pages ?? 0;
}

export const analyzeShadow = (db: Queryable, table: string) => db.query(`ANALYZE ${table}${SUFFIX}`);

/**
 * Builds the shadow's page-index buckets (infra/migrations/022_page_index_shadows.sql) and attaches the
 * triggers that keep them exact through the catch-up; a no-op for tables without page indexes.
 */
export const buildShadowPageIndexes = (db: Queryable, table: string) =>
  db.query('SELECT page_index_shadow($1, $2)', [table, SUFFIX]);

/**
 * Forgets the shadow's page-index buckets and triggers: a resumed pass loads without paying for them
 * (they are built again after the indexes), and a dropped shadow leaves nothing behind.
 */
export async function dropShadowPageIndexes(db: Queryable, projection: Projection): Promise<void> {
  for (const table of projection.tables) {
    await db.query('SELECT page_index_shadow_drop($1, $2)', [table, SUFFIX]);
  }
}

/**
 * Inside the caller's transaction: drops the live tables and renames the shadows (with their indexes
 * and keys) into their places. Readers see the old tables until the commit, then the new ones.
 */
export async function swapInShadow(db: Queryable, projection: Projection): Promise<void> {
  const shadow = shadowTables(projection);
  for (const table of projection.tables) {
    await db.query(`DROP TABLE ${table}`);
    await db.query(`ALTER TABLE ${shadow[table]} RENAME TO ${table}`);
    await db.query(`ALTER TABLE ${table} RESET (autovacuum_enabled)`);
    const { rows } = await db.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
       WHERE i.indrelid = $1::regclass AND c.relname LIKE '%\\_\\_shadow' ORDER BY c.relname`,
      [table],
    );
    // Renaming a key's index renames the key too.
    for (const index of rows) {
      await db.query(`ALTER INDEX ${index.name} RENAME TO ${index.name.slice(0, -SUFFIX.length)}`);
    }
    // The new table takes over the page-index triggers and the buckets built for it before the swap
    // (a no-op for tables without page indexes; see infra/migrations/022_page_index_shadows.sql).
    await db.query('SELECT page_index_swap($1, $2)', [table, SUFFIX]);
    // Cached search pages of the old table must not serve the new one (023_table_versions.sql).
    await db.query('SELECT table_version_attach($1) FROM table_versions WHERE table_name = $1', [table]);
  }
}

export async function dropShadow(db: Queryable, projection: Projection): Promise<void> {
  const shadow = shadowTables(projection);
  await dropShadowPageIndexes(db, projection);
  for (const table of projection.tables) await db.query(`DROP TABLE IF EXISTS ${shadow[table]}`);
}

/** Rows per table of the live tables (after a swap) or the shadows (a dry run). */
export async function countRows(
  db: Queryable,
  projection: Projection,
  which: 'live' | 'shadow',
): Promise<number> {
  const shadow = shadowTables(projection);
  let total = 0;
  for (const table of projection.tables) {
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${which === 'live' ? table : shadow[table]}`,
    );
    total += rows[0]?.n ?? 0;
  }
  return total;
}

export interface TableDiff {
  table: string;
  onlyLive: number;
  onlyShadow: number;
}

/** Rows that differ between live and shadow, per table (compared on every column). */
export async function diffShadow(db: Queryable, projection: Projection): Promise<TableDiff[]> {
  const shadow = shadowTables(projection);
  const diffs: TableDiff[] = [];
  for (const table of projection.tables) {
    const { rows } = await db.query<{ only_live: number; only_shadow: number }>(
      `SELECT (SELECT count(*) FROM (SELECT * FROM ${table} EXCEPT ALL SELECT * FROM ${shadow[table]}) a)::int AS only_live,
              (SELECT count(*) FROM (SELECT * FROM ${shadow[table]} EXCEPT ALL SELECT * FROM ${table}) b)::int AS only_shadow`,
    );
    diffs.push({ table, onlyLive: rows[0]?.only_live ?? 0, onlyShadow: rows[0]?.only_shadow ?? 0 });
  }
  return diffs;
}
