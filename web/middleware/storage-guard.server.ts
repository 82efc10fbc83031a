import type { Middleware } from 'koa';
import type { Database } from '#infra/db/database.ts';

const readsOnly = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Refuses every request that may write while the database's files are missing (embedded: DATA_DIR
 * removed while Rivals runs): PGlite would take the write into files it still holds open and answer
 * "saved" for a change nobody will ever read again. It costs one stat per write (none without
 * `checkStorage`: Postgres keeps its own files). Reads go on from what PGlite holds, so a person can
 * still look things up; one that needs a file PGlite had not opened fails saying why (errorMiddleware).
 */
export function storageGuard(db: Pick<Database, 'checkStorage'>): Middleware {
  if (!db.checkStorage) return (_ctx, next) => next();
  return async (ctx, next) => {
    if (!readsOnly.has(ctx.method)) await db.checkStorage?.();
    await next();
  };
}
