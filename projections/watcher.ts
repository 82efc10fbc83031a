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
 * batch; a slow poll covers a missed notification. One checkpoint query serves all waiters.
 */
export class ProjectionWatcher {
  private readonly waiters = new Set<Waiter>();
  private unlisten: (() => Promise<void>) | undefined;
  private poll: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private recheck = false;

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
      this.waiters.add(waiter);
      this.poll ??= setInterval(() => this.check(), this.pollMs);
      this.check();
    });
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
    }>('SELECT projection, transaction_id::text AS transaction_id, position FROM projection_checkpoints');
    const reached = new Map(
      rows.map((r) => [r.projection, { transactionId: r.transaction_id, position: r.position }]),
    );
    for (const waiter of [...this.waiters]) {
      const done = waiter.names.every((name) => {
        const checkpoint = reached.get(name);
        return checkpoint !== undefined && checkpointReached(checkpoint, waiter.target);
      });
      if (done) waiter.resolve(true);
    }
  }
}
