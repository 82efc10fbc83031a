import type { Checkpoint } from '#events/envelope.ts';
import type { Database } from '#infra/db/database.ts';
import { notifyChannels } from '#infra/db/notify-channels.ts';
import type { ProjectionName } from './all-projections.ts';
import { checkpointReached } from './runner.ts';

interface Waiter {
  names: readonly ProjectionName[];
  target: Checkpoint;
  resolve: (reached: boolean) => void;
}

/**
 * Read-your-writes for web requests: `waitFor` resolves once the named projections have passed a
 * command's last event, on whichever instance projected it. Woken by the runners' NOTIFY after each
 * batch; a slow poll covers a missed notification. One checkpoint query serves all waiters. A runner in
 * the same process reports its commits directly (`reached`), which answers without that round trip.
 */
export class ProjectionWatcher {
  private readonly waiters = new Set<Waiter>();
  private unlisten: (() => Promise<void>) | undefined;
  private poll: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private recheck = false;
  /** The furthest checkpoint known committed per projection (from queries and local commits). */
  private readonly known = new Map<string, Checkpoint>();

  constructor(
    private readonly db: Database,
    private readonly pollMs = 250,
  ) {}

  async start(): Promise<void> {
    this.unlisten = await this.db.notifier.listen(notifyChannels.projected, () => this.check());
  }

  async stop(): Promise<void> {
    clearInterval(this.poll);
    await this.unlisten?.();
    for (const waiter of this.waiters) waiter.resolve(false);
    this.waiters.clear();
  }

  /** True once every named projection reached `target`; false after `timeoutMs`. */
  waitFor(names: readonly ProjectionName[], target: Checkpoint, timeoutMs: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => finish(false), timeoutMs);
      const waiter: Waiter = { names, target, resolve: (reached) => finish(reached) };
      const finish = (reached: boolean) => {
        clearTimeout(timer);
        if (!this.waiters.delete(waiter)) return;
        if (this.waiters.size === 0) {
          clearInterval(this.poll);
          this.poll = undefined;
        }
        resolve(reached);
      };
      // Not answered from `known` alone: a point-in-time replay can move a stored checkpoint back, so
      // a new wait always reads the stored checkpoints (a local commit report may answer it sooner).
      this.waiters.add(waiter);
      this.poll ??= setInterval(() => this.check(), this.pollMs);
      this.check();
    });
  }

  /** A projection's batch committed at `checkpoint` in this process. */
  reached(projection: string, checkpoint: Checkpoint): void {
    this.learn(projection, checkpoint);
    this.settleWaiters();
  }

  private learn(projection: string, checkpoint: Checkpoint): void {
    const before = this.known.get(projection);
    if (!before || checkpointReached(checkpoint, before)) this.known.set(projection, checkpoint);
  }

  private passed(waiter: Waiter): boolean {
    return waiter.names.every((name) => {
      const checkpoint = this.known.get(name);
      return checkpoint !== undefined && checkpointReached(checkpoint, waiter.target);
    });
  }

  private settleWaiters(): void {
    for (const waiter of [...this.waiters]) if (this.passed(waiter)) waiter.resolve(true);
  }

  private check(): void {
    if (this.waiters.size === 0) return;
    if (this.checking) {
      this.recheck = true;
      return;
    }
    this.checking = this.checkNow()
      .catch(() => undefined)
      .finally(() => {
        this.checking = undefined;
        if (this.recheck) {
          this.recheck = false;
          this.check();
        }
      });
  }

  private async checkNow(): Promise<void> {
    const { rows } = await this.db.pool.query<{
      projection: string;
      transaction_id: string;
      position: number;
    }>({
      name: 'rivals-checkpoints',
      text: 'SELECT projection, transaction_id::text AS transaction_id, position FROM projection_checkpoints',
    });
    // The stored checkpoints are the truth (a rebuild may have moved one); local commits only add to it.
    for (const r of rows)
      this.known.set(r.projection, { transactionId: r.transaction_id, position: r.position });
    this.settleWaiters();
  }
}
