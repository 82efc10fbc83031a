import { compareCheckpoints, startOfLog, type Checkpoint, type RecordedEvent } from '#events/envelope.ts';
import type { EventLogReader } from '#events/store/event-log-reader.ts';
import { withTransaction, type Database, type Queryable } from '#infra/db/database.ts';
import { notify, notifyChannels } from '#infra/db/notify-channels.ts';
import type { WriteReport } from '#infra/db/write-report.ts';
import type { Logger } from '#infra/logger.ts';
import type { ProjectionName } from './all-projections.ts';
import { liveTables, type Projection as AnyProjection } from './projection.ts';
import { describeHeldBack, oldestOpenTransactions } from './held-back-by.ts';
import { RebuildBusyError } from './rebuild/rebuild-lease.ts';
import { rebuildProjections } from './rebuild/rebuild.ts';

/** A projection of the app's list, so reactors get its typed name. */
type Projection = AnyProjection<string, ProjectionName>;

/** Called after a projection batch commits (never during a replay). */
/** Told a batch a projection committed, in this process: its events and where its checkpoint now stands. */
export type Reactor = (
  projection: ProjectionName,
  events: readonly RecordedEvent[],
  checkpoint: Checkpoint,
) => void;

/** Told the checkpoint a projection's batch committed, in this process. */
export type CheckpointListener = (projection: ProjectionName, checkpoint: Checkpoint) => void;

export interface RunnerOptions {
  db: Database;
  store: EventLogReader;
  projections: readonly Projection[];
  log: Logger;
  /** Events per transaction (default 500). */
  batchSize?: number;
  /** Safety-net poll when no notification arrives (default 2 s). */
  pollMs?: number;
  /**
   * Each projection's own report of how its batches' writes went: applied, or the error they failed with
   * (see readiness). One per projection, so that one still applying does not clear another's refusal: a
   * projection whose table refused its writes made `/readyz` flap, unready and ready by turns, while the
   * others applied the same events.
   */
  writeReport?: (projection: string) => WriteReport;
}

type BatchResult =
  | { kind: 'applied'; events: RecordedEvent[]; checkpoint: Checkpoint }
  | { kind: 'idle' }
  | { kind: 'unsettled' }
  | { kind: 'busy' }
  | { kind: 'stale' }
  | { kind: 'newer'; builtVersion: number };

/**
 * Keeps every projection caught up with the log. Each batch reads events in commit-safe order and
 * commits the read-model changes with the checkpoint in one transaction, under a transaction-level
 * advisory lock: one owner per projection at a time, and a crashed owner's lock is gone with its
 * connection. Woken by NOTIFY, with a slow poll as a safety net.
 */
export class ProjectionRunner {
  private readonly reactors = new Set<Reactor>();
  private readonly checkpointListeners = new Set<CheckpointListener>();
  private readonly wakers = new Map<string, () => void>();
  private readonly dirty = new Set<string>();
  /** Blue-green rebuilds of projections whose code version changed, started by this runner. */
  private readonly upgrades = new Map<string, Promise<void>>();
  /** Stops the rebuilds for new versions between batches: a stop must not wait for a whole rebuild. */
  private readonly stopping = new AbortController();
  private loops: Promise<void>[] = [];
  private running = false;
  private unlisten: (() => Promise<void>) | undefined;

  constructor(private readonly options: RunnerOptions) {}

  onCommitted(reactor: Reactor): () => void {
    this.reactors.add(reactor);
    return () => this.reactors.delete(reactor);
  }

  /**
   * Hears every checkpoint this runner commits, at once: a watcher in the same process need not wait
   * for the NOTIFY and read the checkpoints back (other processes still hear the NOTIFY).
   */
  onCheckpoint(listener: CheckpointListener): () => void {
    this.checkpointListeners.add(listener);
    return () => this.checkpointListeners.delete(listener);
  }

  /** Wakes every projection now: a writer in this process appended (others hear the NOTIFY). */
  wake(): void {
    this.wakeAll();
  }

  async start(): Promise<void> {
    this.running = true;
    this.unlisten = await this.options.db.notifier.listen(notifyChannels.eventsAppended, () =>
      this.wakeAll(),
    );
    this.loops = this.options.projections.map((p) => this.loop(p));
  }

  async stop(): Promise<void> {
    this.running = false;
    this.stopping.abort(new Error('the projection runner stopped'));
    this.wakeAll();
    await this.unlisten?.();
    await Promise.all(this.loops);
    await Promise.all(this.upgrades.values());
  }

  /**
   * Processes everything committed so far for one projection, waiting out transactions that are still
   * running (their events may come first) and another owner's batch; returns how many events it applied.
   */
  async catchUp(projection: Projection, timeoutMs = 60_000): Promise<number> {
    let total = 0;
    let deadline = Date.now() + timeoutMs;
    for (;;) {
      const result = await this.batch(projection);
      if (result.kind === 'newer') throw new NewerProjectionError(projection, result.builtVersion);
      if (result.kind === 'stale') {
        await this.upgrade(projection);
        // Another process may be the one rebuilding it: look again shortly.
        await new Promise((resolve) => setTimeout(resolve, 50));
        deadline = Date.now() + timeoutMs;
      } else if (result.kind === 'applied') {
        total += result.events.length;
        // The limit is on waiting without progress, not on the whole catch-up.
        deadline = Date.now() + timeoutMs;
      } else if (result.kind === 'idle') return total;
      else if (Date.now() > deadline) {
        throw new Error(
          `${projection.name} made no progress for ${timeoutMs} ms (${await heldBackBy(this.options.db)})`,
        );
      } else await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  private wakeAll(): void {
    for (const [name, wake] of this.wakers) {
      this.dirty.add(name);
      wake();
    }
  }

  private async loop(projection: Projection): Promise<void> {
    const { log } = this.options;
    const pollMs = this.options.pollMs ?? 2_000;
    let delayMs = 0;
    let backoffMs = 0;
    let standingBy = false;
    const onWrite = this.options.writeReport?.(projection.name);
    this.dirty.add(projection.name);
    while (this.running) {
      if (!this.dirty.has(projection.name) || delayMs > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, delayMs || pollMs);
          function done() {
            clearTimeout(timer);
            resolve();
          }
          this.wakers.set(projection.name, done);
        });
      }
      this.dirty.delete(projection.name);
      delayMs = 0;
      if (!this.running) break;
      try {
        const result = await this.batch(projection);
        // Events exist that a still-running transaction may precede: look again soon, backing off
        // (5 ms doubling to 200 ms) so a long transaction elsewhere does not make us spin.
        backoffMs = result.kind === 'unsettled' ? Math.min(backoffMs ? backoffMs * 2 : 5, 200) : 0;
        // Read on at once after a batch: under load, what was committed meanwhile is already there (the
        // writers' wake-up comes once per batch of theirs). Tried: waiting for that wake-up unless the
        // batch was full or events lay past the horizon saved the empty batch at low load, but the runner
        // then lagged the worker by a whole batch (the sustained rate fell about a quarter, back to back).
        if (result.kind === 'applied') {
          onWrite?.();
          this.dirty.add(projection.name);
        } else if (result.kind === 'unsettled') delayMs = backoffMs;
        else if (result.kind === 'busy') delayMs = pollMs / 4;
        else if (result.kind === 'stale') {
          // The old tables keep serving while the new version is built beside them.
          void this.upgrade(projection).catch(() => undefined);
          delayMs = pollMs;
        } else if (result.kind === 'newer') {
          // A rolling upgrade: newer instances run it now. Said once; looked at again in case of a rollback.
          if (!standingBy)
            log.warn(
              { projection: projection.name },
              new NewerProjectionError(projection, result.builtVersion).message,
            );
          standingBy = true;
          delayMs = pollMs;
        }
        if (result.kind !== 'newer') standingBy = false;
      } catch (error) {
        onWrite?.(error);
        log.error({ err: error, projection: projection.name }, 'projection batch failed; retrying');
        delayMs = 1_000;
      }
    }
  }

  private async batch(projection: Projection): Promise<BatchResult> {
    const { db, store } = this.options;
    const batchSize = this.options.batchSize ?? 500;
    const result = await withTransaction(db.pool, async (client): Promise<BatchResult> => {
      // Named statements: every batch of every projection runs them (parsed and planned once per connection).
      const { rows } = await client.query<{ owner: boolean }>({
        name: 'rivals-projection-lock',
        text: 'SELECT pg_try_advisory_xact_lock(hashtext($1)) AS owner',
        values: [`projection:${projection.name}`],
      });
      if (!rows[0]?.owner) return { kind: 'busy' };
      const checkpoint = await openCheckpoint(client, projection);
      if (typeof checkpoint === 'number') return { kind: 'newer', builtVersion: checkpoint };
      if (checkpoint === 'stale') return { kind: 'stale' };
      const { events, scannedTo } = await store.readTypes(checkpoint, projection.handles, batchSize, client);
      const last = events.at(-1);
      const next = scannedTo && (!last || compareCheckpoints(scannedTo, last) > 0) ? scannedTo : last;
      if (!next || compareCheckpoints(next, checkpoint) <= 0) {
        return (await store.hasUnsettled(checkpoint, client)) ? { kind: 'unsettled' } : { kind: 'idle' };
      }
      if (events.length > 0) await projection.apply(client, events, liveTables(projection));
      await client.query({
        name: 'rivals-checkpoint-move',
        text: `UPDATE projection_checkpoints SET transaction_id = $2::xid8, position = $3, updated_at = now()
         WHERE projection = $1`,
        values: [projection.name, next.transactionId, next.position],
      });
      return { kind: 'applied', events, checkpoint: next };
    });
    if (result.kind === 'applied') {
      for (const listener of this.checkpointListeners) listener(projection.name, result.checkpoint);
      // After the commit, in its own statement: see EventLogWriter.notifyAppended.
      await notify(db.pool, notifyChannels.projected, projection.name);
    }
    if (result.kind === 'applied' && result.events.length > 0) {
      for (const reactor of this.reactors) {
        try {
          reactor(projection.name, result.events, result.checkpoint);
        } catch (error) {
          this.options.log.error({ err: error }, 'reactor failed');
        }
      }
    }
    return result;
  }

  /**
   * Rebuilds a projection whose code version changed, blue-green (shadow tables, then a swap that
   * sets the new version), once at a time per runner. Another instance already rebuilding it is fine:
   * we wait for its swap.
   */
  private upgrade(projection: Projection): Promise<void> {
    const running = this.upgrades.get(projection.name);
    if (running) return running;
    const { db, store, log } = this.options;
    const { signal } = this.stopping;
    if (signal.aborted) return Promise.resolve();
    log.info(
      { projection: projection.name, version: projection.version },
      'projection version changed; rebuilding it',
    );
    const started = rebuildProjections(db, store, [projection], { signal })
      .then(([summary]) => log.info({ ...summary }, 'projection rebuilt for its new version'))
      .catch((error: unknown) => {
        if (error instanceof RebuildBusyError) log.info({ projection: projection.name }, error.message);
        else if (signal.aborted)
          log.info(
            { projection: projection.name },
            'rebuild for the new version stopped; the next start resumes it',
          );
        else {
          log.error({ err: error, projection: projection.name }, 'rebuilding the new version failed');
          throw error;
        }
      })
      .finally(() => this.upgrades.delete(projection.name));
    this.upgrades.set(projection.name, started);
    return started;
  }
}

/**
 * Reads (creating if needed) the projection's checkpoint. A checkpoint from an older version of the
 * projection's code means its read model is stale: the runner leaves it serving and has it rebuilt. One
 * from a newer version (the version it was built with is answered) belongs to newer instances running
 * beside this one during a rolling upgrade: rebuilding it back to this version would undo their rebuild,
 * and they ours, for as long as both run, each swap putting tables of the other shape under their pages.
 */
async function openCheckpoint(db: Queryable, projection: Projection): Promise<Checkpoint | 'stale' | number> {
  const { rows } = await db.query<{ version: number; transaction_id: string; position: number }>({
    name: 'rivals-checkpoint-open',
    text: `SELECT version, transaction_id::text AS transaction_id, position FROM projection_checkpoints
     WHERE projection = $1`,
    values: [projection.name],
  });
  const row = rows[0];
  if (row?.version === projection.version)
    return { transactionId: row.transaction_id, position: row.position };
  if (row) return row.version > projection.version ? row.version : 'stale';
  // Never run: its tables are as the migrations made them.
  await db.query(
    `INSERT INTO projection_checkpoints (projection, version) VALUES ($1, $2) ON CONFLICT (projection) DO NOTHING`,
    [projection.name, projection.version],
  );
  return startOfLog;
}

/** A projection built by a newer version of the code than this process runs: left to that version. */
export class NewerProjectionError extends Error {
  override name = 'NewerProjectionError';
  constructor(projection: Projection, builtVersion: number) {
    super(
      `${projection.name} is built by a newer version of Rivals (projection version ${builtVersion}, this process has ${projection.version}); this process leaves it to the newer instances`,
    );
  }
}

export const checkpointReached = (checkpoint: Checkpoint, target: Checkpoint): boolean =>
  compareCheckpoints(checkpoint, target) >= 0;

/** Why a catch-up may be stuck, for the operator: the command failed saying only that "a transaction stays open". */
async function heldBackBy(db: Database): Promise<string> {
  const fallback = 'another process holds it, or a transaction stays open';
  const named = describeHeldBack(await oldestOpenTransactions(db));
  return named ? `${fallback}: ${named}` : fallback;
}
