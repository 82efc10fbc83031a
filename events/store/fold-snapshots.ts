import type { Checkpoint } from '../envelope.ts';
import type { Queryable } from '#infra/db/database.ts';

/**
 * Saved folds of the log (`fold_snapshots`): a process that folds the whole log (the ordering) starts
 * from the newest one instead of from the first event.
 */
export function createFoldSnapshots(db: Queryable) {
  return {
    /**
     * Saves a fold of the log as it was at `checkpoint` (a commit-safe position). An older snapshot never
     * replaces a newer one of the same fold version, so workers racing to save are harmless.
     */
    async saveSnapshot(
      name: string,
      foldVersion: number,
      checkpoint: Checkpoint,
      state: unknown,
    ): Promise<void> {
      await db.query(
        `INSERT INTO fold_snapshots AS f (name, fold_version, transaction_id, position, state)
         VALUES ($1, $2, $3::xid8, $4, $5)
         ON CONFLICT (name) DO UPDATE SET fold_version = EXCLUDED.fold_version,
           transaction_id = EXCLUDED.transaction_id, position = EXCLUDED.position, state = EXCLUDED.state,
           saved_at = now()
         WHERE f.fold_version <> EXCLUDED.fold_version
            OR (f.transaction_id, f.position) < (EXCLUDED.transaction_id, EXCLUDED.position)`,
        [name, foldVersion, checkpoint.transactionId, checkpoint.position, JSON.stringify(state)],
      );
    },

    /** The newest saved fold of this name made by `foldVersion`'s rules, if any. */
    async loadSnapshot(
      name: string,
      foldVersion: number,
    ): Promise<{ checkpoint: Checkpoint; state: unknown } | undefined> {
      const { rows } = await db.query<{ xid: string; position: string | number; state: unknown }>(
        `SELECT transaction_id::text AS xid, position, state FROM fold_snapshots
         WHERE name = $1 AND fold_version = $2`,
        [name, foldVersion],
      );
      const row = rows[0];
      if (!row) return undefined;
      return { checkpoint: { transactionId: row.xid, position: Number(row.position) }, state: row.state };
    },
  };
}

export type FoldSnapshots = ReturnType<typeof createFoldSnapshots>;
