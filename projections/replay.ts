import { compareCheckpoints, startOfLog, type Checkpoint, type RecordedEvent } from '#events/envelope.ts';
import type { EventStore } from '#events/store/event-store.ts';
import { withTransaction, type Pool, type Queryable } from '#infra/db/database.ts';
import { shadowTables, type Projection } from './projection.ts';

export interface RebuildOptions {
  /** Stop after this position (a point-in-time rebuild); default: everything committed. */
  toPosition?: number;
  /** Stop at events recorded after this time. */
  toTime?: Date;
  batchSize?: number;
  onProgress?: (applied: number) => void;
}

export interface RebuildResult {
  events: number;
  checkpoint: Checkpoint;
}

/**
 * Builds the projection from the first event into shadow tables (`<table>__shadow`, same columns and
 * indexes as live), leaving the live tables serving reads meanwhile. Reactors are never called.
 */
export async function rebuildShadow(
  pool: Pool,
  store: EventStore,
  projection: Projection,
  options: RebuildOptions = {},
): Promise<RebuildResult> {
  const shadow = shadowTables(projection);
  for (const table of projection.tables) {
    await pool.query(`DROP TABLE IF EXISTS ${shadow[table]}`);
    await pool.query(`CREATE TABLE ${shadow[table]} (LIKE ${table} INCLUDING ALL)`);
  }
  let checkpoint = startOfLog;
  let total = 0;
  const batchSize = options.batchSize ?? 1_000;
  const limited = options.toPosition !== undefined || options.toTime !== undefined;
  // Everything committed when the rebuild starts must be in it; later events the runner adds after the swap.
  const target = await store.headCheckpoint();
  for (;;) {
    const { events: read, scannedTo } = await store.readTypes(checkpoint, projection.handles, batchSize);
    const events = read.filter((e) => withinLimit(e, options));
    if (events.length > 0) {
      await withTransaction(pool, (client) => projection.apply(client, events, shadow));
      checkpoint = events.at(-1) as RecordedEvent;
      total += events.length;
      options.onProgress?.(total);
    }
    if (events.length < read.length) break;
    if (read.length < batchSize) {
      if (!limited && scannedTo && compareCheckpoints(scannedTo, checkpoint) > 0) checkpoint = scannedTo;
      if (!target || compareCheckpoints(scannedTo ?? checkpoint, target) >= 0) break;
      // A transaction that started before ours still runs: its events may come first. Wait for it.
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  return { events: total, checkpoint };
}

function withinLimit(event: RecordedEvent, options: RebuildOptions): boolean {
  if (options.toPosition !== undefined && event.position > options.toPosition) return false;
  if (options.toTime !== undefined && event.recordedAt > options.toTime) return false;
  return true;
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

/**
 * Swaps shadow for live in one transaction (blue-green), moving the checkpoint to where the rebuild
 * stopped; the runner then continues from there. The old tables are dropped.
 */
export async function swapShadow(pool: Pool, projection: Projection, rebuilt: RebuildResult): Promise<void> {
  const shadow = shadowTables(projection);
  await withTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`projection:${projection.name}`]);
    for (const table of projection.tables) {
      await client.query(`DROP TABLE ${table}`);
      await client.query(`ALTER TABLE ${shadow[table]} RENAME TO ${table}`);
      // The new table takes over the page-index triggers and buckets (a no-op for tables without one).
      await client.query('SELECT page_index_attach($1)', [table]);
    }
    await client.query(
      `INSERT INTO projection_checkpoints (projection, version, transaction_id, position) VALUES ($1, $2, $3::xid8, $4)
       ON CONFLICT (projection) DO UPDATE SET version = $2, transaction_id = $3::xid8, position = $4, updated_at = now()`,
      [projection.name, projection.version, rebuilt.checkpoint.transactionId, rebuilt.checkpoint.position],
    );
  });
}
