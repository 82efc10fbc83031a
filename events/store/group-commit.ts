import { isConnectionError } from '#infra/db/database.ts';
import type { GroupItem, GroupResult } from './group-append.ts';

export interface GroupCommitOptions {
  /** Group statements running at once (default 4): the next group gathers while these commit. */
  maxInFlight?: number;
  /** Items per statement at most (default 256). */
  maxItems?: number;
}

interface Waiting {
  item: GroupItem;
  resolve: (result: GroupResult) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: writes submitted while statements are in flight wait and go together in the next one,
 * so N concurrent commands cost one round trip and one commit instead of N. Nothing waits on a timer: a
 * write arriving when a statement slot is free goes at once (alone, through the single-item statement),
 * so a quiet system answers as fast as before and a busy one batches by itself.
 *
 * A group holds each stream and each command id at most once (later ones wait for the next group), so
 * per-stream optimistic concurrency and per-command idempotency are decided exactly as for single
 * writes. When a group statement fails for anything but a lost connection (a concurrent delivery of the
 * same command, a deadlock), its items are written one by one, so one item's trouble never fails the
 * others.
 */
export class GroupCommitter {
  private queue: Waiting[] = [];
  private inFlight = 0;
  private readonly maxInFlight: number;
  private readonly maxItems: number;

  constructor(
    private readonly writeGroup: (items: readonly GroupItem[]) => Promise<GroupResult[]>,
    private readonly writeOne: (item: GroupItem) => Promise<GroupResult>,
    options: GroupCommitOptions = {},
  ) {
    this.maxInFlight = Math.max(1, options.maxInFlight ?? 4);
    this.maxItems = Math.max(1, options.maxItems ?? 256);
  }

  submit(item: GroupItem): Promise<GroupResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const group = this.takeGroup();
      this.inFlight++;
      void this.flush(group).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  /** The oldest waiting writes, each stream and command id once, in arrival order. */
  private takeGroup(): Waiting[] {
    const streams = new Set<string>();
    const commands = new Set<string>();
    const group: Waiting[] = [];
    const rest: Waiting[] = [];
    for (const waiting of this.queue) {
      const { stream, commandId } = waiting.item;
      if (group.length < this.maxItems && !streams.has(stream) && !commands.has(commandId)) {
        group.push(waiting);
        streams.add(stream);
        commands.add(commandId);
      } else rest.push(waiting);
    }
    this.queue = rest;
    return group;
  }

  private async flush(group: Waiting[]): Promise<void> {
    if (group.length === 1) {
      const [only] = group as [Waiting];
      await this.writeOne(only.item).then(only.resolve, only.reject);
      return;
    }
    let results: GroupResult[];
    try {
      results = await this.writeGroup(group.map((w) => w.item));
    } catch (error) {
      if (isConnectionError(error)) {
        for (const w of group) w.reject(error);
        return;
      }
      await Promise.all(group.map((w) => this.writeOne(w.item).then(w.resolve, w.reject)));
      return;
    }
    group.forEach((w, i) => {
      const result = results[i];
      if (result) w.resolve(result);
      else w.reject(new Error('group write answered fewer results than items'));
    });
  }
}
