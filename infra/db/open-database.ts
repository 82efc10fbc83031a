import type { Config } from '../config.ts';
import { StartupError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Database } from './database.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { openEmbeddedDatabase } from './open-embedded.ts';
import { describeUrl, openPostgresDatabase } from './open-postgres.ts';

export interface OpenOptions {
  /** Shown to a second process that finds the embedded data folder in use. */
  purpose: string;
  /** Attempts before giving up on an unreachable database (default 6: about 30 s in all). */
  attempts?: number;
  poolSize?: number;
  /** Throws when a stop was asked for: an unreachable server is not waited for any longer then. */
  stopIfAsked?: () => void;
}

/**
 * Opens the database the configuration names: PGlite in DATA_DIR (after taking the folder's lock), or
 * the Postgres at DATABASE_URL, retrying an unreachable server with backoff before a clear failure.
 */
export async function openDatabase(config: Config, log: Logger, options: OpenOptions): Promise<Database> {
  if (!config.DATABASE_URL) {
    const lock = await lockDataDir(config.DATA_DIR, options.purpose);
    try {
      const db = await openEmbeddedDatabase(config.DATA_DIR);
      return {
        ...db,
        async close() {
          await db.close();
          await lock.release();
        },
      };
    } catch (error) {
      await lock.release();
      throw error;
    }
  }
  const url = config.DATABASE_URL;
  const attempts = options.attempts ?? 6;
  for (let attempt = 1; ; attempt++) {
    const db = await openPostgresDatabase(url, log, { poolSize: options.poolSize });
    try {
      await db.pool.query('SELECT 1');
      return db;
    } catch (error) {
      await db.close().catch(() => undefined);
      const reason = (error as Error).message || (error as NodeJS.ErrnoException).code || 'unknown error';
      if (attempt >= attempts) {
        throw new StartupError(
          `Cannot reach the database at ${describeUrl(url)} (${reason}) after ${attempts} attempts. Check DATABASE_URL and that Postgres is running.`,
        );
      }
      const delayMs = Math.min(500 * 2 ** (attempt - 1), 8_000);
      log.warn(
        `Database at ${describeUrl(url)} not reachable (${reason}); retrying in ${delayMs / 1000}s (attempt ${attempt}/${attempts}).`,
      );
      // Looked at every 100 ms of the wait: a stop does not wait out a back-off of up to 8 s.
      for (let waited = 0; waited < delayMs; waited += 100) {
        options.stopIfAsked?.();
        await new Promise((resolve) => setTimeout(resolve, Math.min(100, delayMs - waited)));
      }
      options.stopIfAsked?.();
    }
  }
}
