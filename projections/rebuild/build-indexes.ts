import os from 'node:os';
import { checkOut, type Database, type Queryable } from '#infra/db/database.ts';
import type { Projection } from '../projection.ts';
import {
  analyzeShadow,
  buildShadowPageIndexes,
  shadowIndexes,
  shadowPages,
  type ShadowIndex,
} from './shadow-tables.ts';

export interface IndexBuildOptions {
  /** Connections building at once on Postgres (default: this machine's cores, 2 to 4). */
  connections?: number;
  /** Called when the last index of a projection's tables is built and they are analyzed. */
  onProjectionDone?: (projection: string) => void;
}

type Task =
  | { kind: 'index'; index: ShadowIndex; cost: number }
  | { kind: 'analyze'; table: string }
  | { kind: 'buckets'; table: string };

/** A trigram GIN build costs several times a btree over the same pages (measured: about 5-10×). */
const methodWeight = (method: string) => (method === 'gin' ? 8 : 1);

/**
 * Builds every secondary index of the projections' shadow tables, on several connections at once on
 * Postgres (an index build uses one core; the biggest first, so the last to finish is a small one),
 * with more sort memory for those sessions (a trigram index that fits builds in one pass). Each table
 * is analyzed as soon as its own indexes are done, while others still build, and then gets its
 * page-index buckets, so the swap only renames them into place. No statement runs in a
 * long transaction: each is its own, so commit-safe readers elsewhere never wait on this.
 */
export async function buildShadowIndexes(
  db: Database,
  projections: readonly Projection[],
  options: IndexBuildOptions = {},
): Promise<void> {
  const owner = new Map<string, Projection>();
  for (const projection of projections) for (const table of projection.tables) owner.set(table, projection);
  const pending = new Map<string, number>([...owner.keys()].map((t) => [t, 0]));
  const tableLeft = new Map(projections.map((p) => [p.name, p.tables.length]));
  const queue: Task[] = [];
  for (const projection of projections) {
    for (const index of await shadowIndexes(db.pool, projection)) {
      const pages = await shadowPages(db.pool, index.table);
      queue.push({ kind: 'index', index, cost: (pages + 1) * methodWeight(index.method) });
      pending.set(index.table, (pending.get(index.table) ?? 0) + 1);
    }
  }
  queue.sort((a, b) => (b.kind === 'index' ? b.cost : 0) - (a.kind === 'index' ? a.cost : 0));
  // Tables without secondary indexes are analyzed first (they are small: keys only).
  for (const [table, count] of pending) if (count === 0) queue.unshift({ kind: 'analyze', table });

  const tableDone = (table: string) => {
    const projection = owner.get(table);
    if (!projection) return;
    const left = (tableLeft.get(projection.name) ?? 1) - 1;
    tableLeft.set(projection.name, left);
    if (left === 0) options.onProjectionDone?.(projection.name);
  };

  const run = async (client: Queryable, task: Task) => {
    if (task.kind === 'analyze') {
      await analyzeShadow(client, task.table);
      // Next on this connection: the page-index buckets, read through the indexes just built.
      queue.unshift({ kind: 'buckets', table: task.table });
      return;
    }
    if (task.kind === 'buckets') {
      await buildShadowPageIndexes(client, task.table);
      tableDone(task.table);
      return;
    }
    await client.query(task.index.sql);
    const left = (pending.get(task.index.table) ?? 1) - 1;
    pending.set(task.index.table, left);
    // Analyze next on this connection: its statistics (expression indexes included) are ready now.
    if (left === 0) queue.unshift({ kind: 'analyze', table: task.index.table });
  };

  const workers =
    db.kind === 'postgres'
      ? Math.max(1, Math.min(options.connections ?? defaultConnections(), queue.length))
      : 1;
  await Promise.all(Array.from({ length: workers }, () => worker(db, workers, queue, run)));
}

const defaultConnections = () => Math.min(4, Math.max(2, os.availableParallelism()));

async function worker(
  db: Database,
  workers: number,
  queue: Task[],
  run: (client: Queryable, task: Task) => Promise<void>,
): Promise<void> {
  // Held for several statements: a connection lost between them fails the rebuild, not the process.
  const { client, release } = await checkOut(db.pool);
  try {
    // The embedded database's memory is the process's own: it keeps the smaller setting.
    await client.query(`SET maintenance_work_mem = '${db.kind === 'postgres' ? '512MB' : '256MB'}'`);
    // Our connections already keep the cores busy; Postgres's own parallel workers would only queue.
    if (workers > 1) await client.query('SET max_parallel_maintenance_workers = 0');
    for (let task = queue.shift(); task; task = queue.shift()) await run(client, task);
  } finally {
    await client.query('RESET ALL').catch(() => undefined);
    release();
  }
}
