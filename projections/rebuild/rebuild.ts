import {
  acceptedAt,
  compareCheckpoints,
  startOfLog,
  type Checkpoint,
  type RecordedEvent,
} from '#events/envelope.ts';
import type { EventLogReader } from '#events/store/event-log-reader.ts';
import { withTransaction, type Database, type Queryable } from '#infra/db/database.ts';
import { shadowTables, type Projection } from '../projection.ts';
import { buildShadowIndexes } from './build-indexes.ts';
import { takeRebuildLease } from './rebuild-lease.ts';
import {
  countRows,
  createShadow,
  diffShadow,
  dropShadow,
  dropShadowPageIndexes,
  shadowExists,
  swapInShadow,
} from './shadow-tables.ts';

export interface RebuildOptions {
  /** Stop after this position (a point-in-time rebuild); default: everything committed. */
  toPosition?: number;
  /**
   * Leave out events whose command was accepted after this time: the clock the pages show and the
   * history's "as of" reads (docs/decisions/0020). Not a stop: a worker can store a change accepted
   * before the time after later ones, so the pass reads on to the newest event.
   */
  toTime?: Date;
  /** Build and compare with the live tables; change nothing. */
  dryRun?: boolean;
  /** Start over even if an interrupted rebuild left shadow tables to resume. */
  restart?: boolean;
  /** Events read per batch (default 2,000: each batch is one transaction, kept short). */
  batchSize?: number;
  /**
   * Stops the pass over the log after the batch under way (its shadow checkpoint committed: the next
   * rebuild resumes there), rejecting with the signal's reason. Indexing and the swap, once begun, finish.
   */
  signal?: AbortSignal;
  /** Brings the live projection up to date before a dry run compares with it. */
  catchUpLive?: (projection: Projection) => Promise<unknown>;
  onStart?: (start: { projection: string; total: number; done: number; resumedFrom?: number }) => void;
  onProgress?: (projection: string, done: number) => void;
  onPhase?: (projection: string, phase: 'indexing' | 'catching up' | 'comparing' | 'swapping') => void;
}

export interface RebuildSummary {
  projection: string;
  /** Events of the types it handles, applied into the new tables. */
  events: number;
  rows: number;
  seconds: number;
  /** Rows only in live plus rows only in the rebuild (dry runs; null otherwise). */
  differences: number | null;
  /** Where an interrupted rebuild was resumed from (position), if it was. */
  resumedFrom: number | null;
}

interface Job {
  projection: Projection;
  handles: Set<string>;
  checkpoint: Checkpoint;
  events: number;
  seconds: number;
  resumedFrom: number | null;
  memo: Map<string, unknown>;
}

interface Limits {
  toPosition: number | null;
  toTime: string | null;
}

/**
 * Rebuilds projections blue-green in one pass over the log: every batch read once feeds all selected
 * projections, each into shadow tables that have their keys but no secondary indexes, with the
 * shadow checkpoints committed in the same transaction (so a killed rebuild resumes). Then each
 * projection's indexes are built once and analyzed; a dry run compares with live and drops the
 * shadows; otherwise the shadow is caught up to the live head under the projection's lock and swapped
 * in atomically. The live runner keeps serving from the old tables until that commit.
 */
export async function rebuildProjections(
  db: Database,
  store: EventLogReader,
  projections: readonly Projection[],
  options: RebuildOptions = {},
): Promise<RebuildSummary[]> {
  const lease = await takeRebuildLease(
    db,
    projections.map((p) => p.name),
  );
  // A lock lost with its connection stops the rebuild too: another process may take it over meanwhile.
  const signal = options.signal ? AbortSignal.any([options.signal, lease.lost]) : lease.lost;
  options = { ...options, signal };
  try {
    const limits: Limits = {
      toPosition: options.toPosition ?? null,
      toTime: options.toTime?.toISOString() ?? null,
    };
    const jobs: Job[] = [];
    for (const projection of projections)
      jobs.push(await openJob(db, projection, limits, lease.holder, options));
    const totals = await countByType(db.pool, limits);
    for (const job of jobs) {
      const total = [...job.handles].reduce((n, type) => n + (totals.get(type) ?? 0), 0);
      options.onStart?.({
        projection: job.projection.name,
        total: Math.max(total, job.events),
        done: job.events,
        ...(job.resumedFrom !== null ? { resumedFrom: job.resumedFrom } : {}),
      });
    }
    await readOnce(db, store, jobs, limits, options);
    lease.lost.throwIfAborted();
    await indexAll(db, jobs, options);
    const summaries: RebuildSummary[] = [];
    for (const job of jobs) {
      // Not swapped in without the lock (indexing and a swap under way, once begun, finish).
      lease.lost.throwIfAborted();
      summaries.push(await finish(db, store, job, limits, options));
    }
    return summaries;
  } finally {
    await lease.release();
  }
}

async function openJob(
  db: Database,
  projection: Projection,
  limits: Limits,
  holder: string,
  options: RebuildOptions,
): Promise<Job> {
  const { rows } = await db.pool.query<{
    version: number;
    transaction_id: string;
    position: number;
    events: number;
    limits: Partial<Limits>;
  }>(
    `SELECT version, transaction_id::text AS transaction_id, position, events, limits
     FROM projection_rebuilds WHERE projection = $1`,
    [projection.name],
  );
  const row = rows[0];
  const job: Job = {
    projection,
    handles: new Set(projection.handles),
    checkpoint: startOfLog,
    events: 0,
    seconds: 0,
    resumedFrom: null,
    memo: new Map(),
  };
  const resumable =
    !options.restart &&
    row !== undefined &&
    row.version === projection.version &&
    (row.limits.toPosition ?? null) === limits.toPosition &&
    (row.limits.toTime ?? null) === limits.toTime &&
    (await shadowExists(db.pool, projection));
  if (resumable) {
    job.checkpoint = { transactionId: row.transaction_id, position: row.position };
    job.events = row.events;
    job.resumedFrom = row.position;
    // Buckets and triggers come back after the indexes; until then, loading must not pay for them.
    await dropShadowPageIndexes(db.pool, projection);
    await db.pool.query(
      'UPDATE projection_rebuilds SET holder = $2, updated_at = now() WHERE projection = $1',
      [projection.name, holder],
    );
    return job;
  }
  await createShadow(db.pool, projection);
  await db.pool.query(
    `INSERT INTO projection_rebuilds (projection, version, limits, holder) VALUES ($1, $2, $3, $4)
     ON CONFLICT (projection) DO UPDATE SET version = $2, transaction_id = '0', position = 0, events = 0,
       limits = $3, holder = $4, started_at = now(), updated_at = now()`,
    [projection.name, projection.version, JSON.stringify(limits), holder],
  );
  return job;
}

/** Events per type within the limits: the denominators of the progress bars. */
async function countByType(db: Queryable, limits: Limits): Promise<Map<string, number>> {
  const { rows } = await db.query<{ type: string; n: number }>(
    `SELECT type, count(*)::int AS n FROM events
     WHERE ($1::bigint IS NULL OR position <= $1)
       AND ($2::timestamptz IS NULL OR (metadata->>'at')::timestamptz <= $2)
     GROUP BY type`,
    [limits.toPosition, limits.toTime],
  );
  return new Map(rows.map((r) => [r.type, r.n]));
}

const pastPosition = (event: RecordedEvent, limits: Limits): boolean =>
  limits.toPosition !== null && event.position > limits.toPosition;

const withinLimits = (event: RecordedEvent, limits: Limits): boolean =>
  !pastPosition(event, limits) && (limits.toTime === null || acceptedAt(event) <= Date.parse(limits.toTime));

const limited = (limits: Limits) => limits.toPosition !== null || limits.toTime !== null;

interface Batch {
  events: RecordedEvent[];
  /** How far the batch reaches: its last event, or further when nothing else was committed before. */
  next: Checkpoint;
  /** A full batch: more may follow at once. */
  full: boolean;
  /** The limits were reached: nothing after this batch belongs to the rebuild. */
  stop: boolean;
  scannedTo: Checkpoint | undefined;
}

async function readBatch(
  db: Database,
  store: EventLogReader,
  cursor: Checkpoint,
  types: readonly string[],
  batchSize: number,
  limits: Limits,
): Promise<Batch> {
  const { events: read, scannedTo } = await store.readTypes(cursor, types, batchSize, db.pool);
  const events = read.filter((e) => withinLimits(e, limits));
  // Only a position stops the pass; events accepted after --to-time are skipped, and read past.
  const stop = read.some((e) => pastPosition(e, limits));
  let next: Checkpoint = (stop ? events : read).at(-1) ?? cursor;
  if (!stop && limits.toPosition === null && scannedTo && compareCheckpoints(scannedTo, next) > 0)
    next = scannedTo;
  return { events, next, full: read.length === batchSize, stop, scannedTo };
}

/**
 * The single pass: from the oldest job checkpoint to what was committed when it started. The next
 * batch is read while this one is written (the log and the shadows are on different connections).
 */
async function readOnce(
  db: Database,
  store: EventLogReader,
  jobs: Job[],
  limits: Limits,
  options: RebuildOptions,
): Promise<void> {
  if (jobs.length === 0) return;
  const batchSize = options.batchSize ?? 2_000;
  const types = [...new Set(jobs.flatMap((j) => j.projection.handles))];
  let cursor = jobs.map((j) => j.checkpoint).reduce((a, b) => (compareCheckpoints(a, b) <= 0 ? a : b));
  // Everything committed when the rebuild starts must be in it; later events come at the swap.
  const target = await store.headCheckpoint();
  const read = (from: Checkpoint) => {
    const reading = readBatch(db, store, from, types, batchSize, limits);
    // Awaited below; a write failing first must not leave this one unhandled.
    reading.catch(() => undefined);
    return reading;
  };
  let pending = read(cursor);
  for (;;) {
    const batch = await pending;
    const more = batch.full && !batch.stop;
    if (more) pending = read(batch.next);
    if (compareCheckpoints(batch.next, cursor) > 0) {
      await applyBatch(db, jobs, batch.events, batch.next, options);
      cursor = batch.next;
    }
    options.signal?.throwIfAborted();
    if (batch.stop) break;
    if (!more) {
      if (!target || compareCheckpoints(batch.scannedTo ?? cursor, target) >= 0) break;
      // A transaction that started before ours still runs: its events may come first. Wait for it.
      await new Promise((resolve) => setTimeout(resolve, 10));
      pending = read(cursor);
    }
  }
}

/**
 * Applies one batch to every job not yet past it, each projection in a transaction of its own (on
 * Postgres they run at once, on connections of their own): a job's shadow rows and the checkpoint
 * that says how far they go commit together, so a killed rebuild resumes each where it stopped.
 */
async function applyBatch(
  db: Database,
  jobs: readonly Job[],
  events: readonly RecordedEvent[],
  next: Checkpoint,
  options: RebuildOptions,
): Promise<void> {
  await Promise.all(
    jobs
      .filter((job) => compareCheckpoints(job.checkpoint, next) < 0)
      .map(async (job) => {
        const started = performance.now();
        const count = await withTransaction(db.pool, (client) => applyToJob(client, job, events, next));
        job.seconds += (performance.now() - started) / 1000;
        advance(job, count, next, options);
      }),
  );
}

/** In the caller's transaction: the job's events of the batch, and its shadow checkpoint. */
async function applyToJob(
  db: Queryable,
  job: Job,
  events: readonly RecordedEvent[],
  next: Checkpoint,
): Promise<number> {
  const mine = events.filter((e) => job.handles.has(e.type) && compareCheckpoints(e, job.checkpoint) > 0);
  if (mine.length > 0) await job.projection.apply(db, mine, shadowTables(job.projection), job.memo);
  await db.query(
    `UPDATE projection_rebuilds SET transaction_id = $2::xid8, position = $3, events = events + $4, updated_at = now()
     WHERE projection = $1`,
    [job.projection.name, next.transactionId, next.position, mine.length],
  );
  return mine.length;
}

/** After the job's batch committed: moves its checkpoint and reports progress. */
function advance(job: Job, count: number, next: Checkpoint, options: RebuildOptions): void {
  job.checkpoint = next;
  job.events += count;
  options.onProgress?.(job.projection.name, job.events);
}

/**
 * Applies what was committed after the job's checkpoint (up to `until`, if given), in the caller's
 * transaction.
 */
async function catchUp(
  db: Queryable,
  store: EventLogReader,
  job: Job,
  options: RebuildOptions,
  until?: Checkpoint,
): Promise<void> {
  const batchSize = options.batchSize ?? 2_000;
  for (;;) {
    const { events: read, scannedTo } = await store.readTypes(
      job.checkpoint,
      job.projection.handles,
      batchSize,
      db,
    );
    const events = until ? read.filter((e) => compareCheckpoints(e, until) <= 0) : read;
    let next: Checkpoint = events.at(-1) ?? job.checkpoint;
    if (!until && scannedTo && compareCheckpoints(scannedTo, next) > 0) next = scannedTo;
    if (compareCheckpoints(next, job.checkpoint) <= 0) return;
    const started = performance.now();
    const count = await applyToJob(db, job, events, next);
    job.seconds += (performance.now() - started) / 1000;
    advance(job, count, next, options);
    if (events.length < batchSize) return;
  }
}

/** Index builds are the heaviest step after the pass: all of them at once, bounded by cores. */
async function indexAll(db: Database, jobs: readonly Job[], options: RebuildOptions): Promise<void> {
  const started = performance.now();
  for (const job of jobs) options.onPhase?.(job.projection.name, 'indexing');
  await buildShadowIndexes(
    db,
    jobs.map((j) => j.projection),
    {
      onProjectionDone: (name) => {
        const job = jobs.find((j) => j.projection.name === name);
        if (job) job.seconds += (performance.now() - started) / 1000;
      },
    },
  );
}

async function finish(
  db: Database,
  store: EventLogReader,
  job: Job,
  limits: Limits,
  options: RebuildOptions,
): Promise<RebuildSummary> {
  const { projection } = job;
  const name = projection.name;
  const started = performance.now();
  let differences: number | null = null;
  let rows: number;
  if (options.dryRun) {
    // The live tables as they are now, whatever the limit: the count is of what differs from them.
    await options.catchUpLive?.(projection);
    options.onPhase?.(name, 'comparing');
    ({ differences, rows } = await withTransaction(db.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`projection:${name}`]);
      if (!limited(limits)) {
        const { rows: live } = await client.query<{ transaction_id: string; position: number }>(
          'SELECT transaction_id::text AS transaction_id, position FROM projection_checkpoints WHERE projection = $1',
          [name],
        );
        const at = live[0];
        if (at)
          await catchUp(client, store, job, options, {
            transactionId: at.transaction_id,
            position: at.position,
          });
      }
      const diffs = await diffShadow(client, projection);
      const counted = await countRows(client, projection, 'shadow');
      await dropShadow(client, projection);
      await client.query('DELETE FROM projection_rebuilds WHERE projection = $1', [name]);
      return { differences: diffs.reduce((n, d) => n + d.onlyLive + d.onlyShadow, 0), rows: counted };
    }));
  } else {
    if (!limited(limits)) {
      options.onPhase?.(name, 'catching up');
      // Most of the way without the lock, so the live runner waits only for the last few events.
      await withTransaction(db.pool, (client) => catchUp(client, store, job, options));
    }
    options.onPhase?.(name, 'swapping');
    rows = await withTransaction(db.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`projection:${name}`]);
      if (!limited(limits)) await catchUp(client, store, job, options);
      await swapInShadow(client, projection);
      await client.query(
        `INSERT INTO projection_checkpoints (projection, version, transaction_id, position) VALUES ($1, $2, $3::xid8, $4)
         ON CONFLICT (projection) DO UPDATE SET version = $2, transaction_id = $3::xid8, position = $4, updated_at = now()`,
        [name, projection.version, job.checkpoint.transactionId, job.checkpoint.position],
      );
      await client.query('DELETE FROM projection_rebuilds WHERE projection = $1', [name]);
      return countRows(client, projection, 'live');
    });
  }
  job.seconds += (performance.now() - started) / 1000;
  return {
    projection: name,
    events: job.events,
    rows,
    seconds: job.seconds,
    differences,
    resumedFrom: job.resumedFrom,
  };
}
