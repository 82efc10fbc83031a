import { access, stat } from 'node:fs/promises';
import path from 'node:path';
import { makeFolder } from '../make-folder.ts';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import pg from 'pg';
import { StartupError } from '../errors.ts';
import { StorageMissingError, typeParsers, type Database, type Notifier } from './database.ts';
import type { NotifyChannel } from './notify-channels.ts';

/**
 * Opens the embedded Postgres (PGlite) in `<dataDir>/pgdata`, or in memory for `memory://`.
 * The pool has exactly one connection; see `withTransaction`.
 */
export async function openEmbeddedDatabase(dataDir: string): Promise<Database> {
  const inMemory = dataDir.startsWith('memory://');
  const location = inMemory ? dataDir : path.resolve(dataDir, 'pgdata');
  if (!inMemory)
    await makeFolder(location).catch((error: unknown) => {
      throw new StartupError(
        `The database in ${location} could not be opened (${(error as NodeJS.ErrnoException).code === 'EEXIST' ? 'it is a file, not a folder' : (error as Error).message}). Nothing was changed. ` +
          'Restore the data folder from a backup, or set DATA_DIR to a new folder to start empty.',
      );
    });
  const pglite = await openPglite(location);
  const opened = inMemory ? undefined : await folderIdentity(location);
  const pool = new pg.Pool({ ...createPgConfig(pglite), types: typeParsers });
  pool.on('error', () => undefined);
  // PGlite runs on this thread and answers through promises only: a run of statements (a projection
  // rebuilt at start, a catch-up) never let the event loop reach its I/O, and the server answered
  // nothing, not even /healthz, until it ended. Every checkout of the one connection (each statement,
  // each transaction) first lets the loop turn once.
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  pool.connect = (async () => {
    await new Promise((resolve) => setImmediate(resolve));
    return connect();
  }) as pg.Pool['connect'];
  // pg-pool destroys the client of any query that fails (a unique violation, a bad search) and opens a
  // new one. Over PGlite that new client shares the one backend with whatever is queued behind it, and
  // the swap confused the protocol of concurrent queries ("unexpected commandComplete message"). A failed
  // query leaves PGlite's session usable, so the one client is kept.
  const query = (async (...args: Parameters<pg.Pool['query']>) => {
    const client = await pool.connect();
    try {
      return await (client.query as (...a: unknown[]) => Promise<unknown>)(...args);
    } finally {
      client.release();
    }
  }) as pg.Pool['query'];
  pool.query = query;

  const notifier = embeddedNotifier(pglite, pool);

  return {
    kind: 'embedded',
    describe: inMemory ? 'embedded Postgres in memory' : `embedded Postgres in ${location}`,
    // PGlite serves what it holds in memory after its folder is deleted, but can store nothing more.
    checkStorage: opened === undefined ? undefined : () => checkFolder(dataDir, location, opened),
    pool,
    notifier,
    async close() {
      // A failed statement's trailing protocol messages (its Sync) may still be on their way to PGlite
      // when the caller already has the error; closing under them crashed or hung the process. One more
      // statement through the same connection answers only after everything before it was handled.
      await pool.query('SELECT 1').catch(() => undefined);
      await pool.end();
      await pglite.close();
    },
  };
}

/** Which folder this is on its disk: a folder put in its place (a copy, a restored backup) is another. */
async function folderIdentity(location: string): Promise<string> {
  const { dev, ino } = await stat(location);
  return `${dev}:${ino}`;
}

/**
 * Whether the files PGlite opened are still the data folder. It keeps writing into the files it holds
 * open, so a folder removed, or replaced while it ran (a backup restored, a copy moved into place), takes
 * none of the changes it would answer "saved": those went to the files it opened, which the next start
 * does not read.
 */
async function checkFolder(dataDir: string, location: string, opened: string): Promise<void> {
  const folder = path.resolve(dataDir);
  const now = await access(path.join(location, 'PG_VERSION'))
    .then(() => folderIdentity(location))
    .catch(() => undefined);
  if (now === undefined)
    throw new StorageMissingError(
      `The data folder ${folder} was removed while Rivals was running: nothing can be stored. ` +
        'Stop Rivals (Ctrl+C); start it again to begin with an empty database, or first restore the folder from a backup.',
    );
  if (now !== opened)
    throw new StorageMissingError(
      `The data folder ${folder} was replaced while Rivals was running (a backup restored, or a copy moved into place): ` +
        'changes would go to the files Rivals opened before, which the next start does not read, so nothing can be stored. ' +
        'Stop Rivals (Ctrl+C) and start it again to use the folder as it is now.',
    );
}

/**
 * PGlite, answering a first statement. A folder it cannot open (damaged: copied while in use, a disk that
 * filled up or failed; permissions other than the owner's 0700/0750) ends in a WASM abort or a Postgres
 * error with a stack trace: say instead, in one line, which folder and what to do.
 */
async function openPglite(location: string): Promise<PGlite> {
  let pglite: PGlite | undefined;
  try {
    pglite = await PGlite.create(location, { extensions: { pg_trgm } });
    await pglite.query('SELECT 1');
    return pglite;
  } catch (error) {
    await pglite?.close().catch(() => undefined);
    const reason = openFailureReason(error);
    throw new StartupError(
      `The database in ${location} could not be opened (${reason}). Nothing was changed. It may be damaged ` +
        '(copied while Rivals was running, a disk that filled up or failed) or its permissions changed (it ' +
        'must belong to this user, mode 700). Restore the data folder from a backup, or set DATA_DIR to a new ' +
        'folder to start empty.',
    );
  }
}

/** Emscripten's file-system errors carry only a number (its own numbering, not the host's). */
const fileSystemErrors: Record<number, string> = {
  2: 'permission denied',
  29: 'input/output error',
  44: 'a file or folder it needs is missing',
  51: 'no space left on the disk',
  63: 'operation not permitted',
};

/**
 * Why PGlite could not open its folder, in one line. Its file system throws errors that are not
 * `Error`s (an object with an `errno` and no message), which `String` turns into "[object Object]".
 */
export function openFailureReason(error: unknown): string {
  const { message, errno, code } = (typeof error === 'object' && error !== null ? error : {}) as {
    message?: unknown;
    errno?: unknown;
    code?: unknown;
  };
  if (typeof message === 'string' && message.trim() !== '') return message.trim().split('\n')[0] ?? message;
  if (typeof errno === 'number') return fileSystemErrors[errno] ?? `file system error ${errno}`;
  if (typeof code === 'string') return code;
  if (typeof error === 'string' && error.trim() !== '') return error.trim().split('\n')[0] ?? error;
  return 'no reason given';
}

/**
 * Notifications without SQL on subscribe and unsubscribe. PGlite's own `listen`/`unlisten` run LISTEN
 * through `pglite.exec`, which is not ordered with the node-postgres adapter's protocol messages: when
 * one slipped between a pool query's messages, the two exchanged results and the pool's query never
 * answered (a runner's batch hung on `stop`). So each channel is LISTENed once, through the pool like
 * every other statement, and PGlite's notification hook (no SQL) hands payloads to our subscribers.
 */
function embeddedNotifier(pglite: PGlite, pool: pg.Pool): Notifier {
  const subscribers = new Map<NotifyChannel, Set<(payload: string) => void>>();
  const listening = new Map<NotifyChannel, Promise<unknown>>();
  pglite.onNotification((channel, payload) => {
    for (const onMessage of subscribers.get(channel as NotifyChannel) ?? []) onMessage(payload);
  });
  return {
    async listen(channel, onMessage) {
      let listeners = subscribers.get(channel);
      if (!listeners) subscribers.set(channel, (listeners = new Set()));
      listeners.add(onMessage);
      // Channel names come from `notifyChannels` (constants), never from input.
      const listened = listening.get(channel) ?? pool.query(`LISTEN "${channel}"`);
      listening.set(channel, listened);
      try {
        await listened;
      } catch (error) {
        listening.delete(channel);
        listeners.delete(onMessage);
        throw error;
      }
      return async () => {
        listeners.delete(onMessage);
      };
    },
  };
}
