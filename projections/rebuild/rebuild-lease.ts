import os from 'node:os';
import { checkOut, type Client, type Database } from '#infra/db/database.ts';

/** A second rebuild of a projection that is being rebuilt right now. */
export class RebuildBusyError extends Error {
  override name = 'RebuildBusyError';
}

export interface RebuildLease {
  /** Who we are, as recorded for others to read. */
  holder: string;
  /**
   * Aborted when the connection holding the lock is lost (Postgres restarted): the lock went with it, so
   * another process may take the rebuild over. The rebuild stops at its next batch and is resumed by the
   * next run.
   */
  lost: AbortSignal;
  release(): Promise<void>;
}

/** Rebuilds held by this process (the embedded database has one connection, so locks are per process). */
const heldHere = new Set<string>();

const lockKey = (projection: string) => `rebuild:${projection}`;

/**
 * Takes the right to rebuild `projections`, or throws `RebuildBusyError` naming who holds one of them.
 * On Postgres it is a session advisory lock on a connection kept for the rebuild: a SIGKILLed rebuild
 * loses it with its connection, so the next run can resume at once. The embedded database can only be
 * open in one process (the data folder lock), so there an in-process set is enough.
 */
export async function takeRebuildLease(db: Database, projections: readonly string[]): Promise<RebuildLease> {
  const holder = `${os.userInfo().username}@${os.hostname()} pid ${process.pid}`;
  const taken: string[] = [];
  let client: Client | undefined;
  let giveBack: (() => void) | undefined;
  const lost = new AbortController();
  const release = async () => {
    for (const name of taken) heldHere.delete(name);
    if (client) {
      if (!lost.signal.aborted) await client.query('SELECT pg_advisory_unlock_all()').catch(() => undefined);
      giveBack?.();
      client = undefined;
    }
  };
  try {
    if (db.kind === 'postgres')
      ({ client, release: giveBack } = await checkOut(db.pool, (error) =>
        lost.abort(
          new Error(
            `the database connection holding the rebuild of ${projections.join(', ')} was lost (${error.message}); run replay again: it resumes where this one stopped`,
          ),
        ),
      ));
    for (const name of projections) {
      let free = !heldHere.has(name);
      if (free && client) {
        const { rows } = await client.query<{ ok: boolean }>(
          'SELECT pg_try_advisory_lock(hashtext($1)) AS ok',
          [lockKey(name)],
        );
        free = rows[0]?.ok === true;
      }
      if (!free) throw new RebuildBusyError(await busyMessage(db, name));
      heldHere.add(name);
      taken.push(name);
    }
  } catch (error) {
    await release();
    throw error;
  }
  return { holder, lost: lost.signal, release };
}

async function busyMessage(db: Database, projection: string): Promise<string> {
  const { rows } = await db.pool.query<{ holder: string; started_at: Date; position: number }>(
    'SELECT holder, started_at, position FROM projection_rebuilds WHERE projection = $1',
    [projection],
  );
  const row = rows[0];
  return row
    ? `${projection} is already being rebuilt by ${row.holder} (started ${row.started_at.toISOString()}, at position ${row.position}); wait for it or stop that process.`
    : `${projection} is already being rebuilt by another process; wait for it or stop that process.`;
}
