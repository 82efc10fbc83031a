import { pgErrorCode, type Database, type Queryable } from '#infra/db/database.ts';
import { BusyError } from '#infra/errors.ts';

/**
 * Searched table reads (docs/decisions/0026): the one kind of page whose cost grows with the data and
 * the words typed (a trigram match, sorted, to a deep page). Left alone, a flood of them (one user's
 * script, a hundred tabs) took every pooled connection for seconds each, and everyone's page 1, sign-in
 * and saves queued behind them. So:
 * - searches hold at most half the pool's connections; the rest is always there for everything else;
 * - a search waits at most `timeoutMs` for its turn, then answers 503 "busy" (with Retry-After);
 * - on Postgres each of its statements runs at most `timeoutMs`, then answers 503 "took too long".
 * The embedded database has one connection and cannot cancel a running statement: searches take turns
 * (one at a time, each waiting at most `timeoutMs`), so the other pages still come in between.
 */
export interface SearchReads {
  /** Runs a table read; `searched` reads go through the gate, with statements bounded in time. */
  run<R>(searched: boolean, work: (db: Queryable) => Promise<R>): Promise<R>;
}

export const SEARCH_BUSY_MESSAGE =
  'Rivals is busy answering other searches right now. Nothing was changed; please try again in a moment.';
export const SEARCH_TOO_LONG_MESSAGE =
  'This search took too long to answer and was stopped. Try more specific words, or an earlier page.';

/** Postgres's "canceling statement due to statement timeout". */
const QUERY_CANCELED = '57014';

export function createSearchReads(db: Database, timeoutMs: number): SearchReads {
  // A search runs at most two statements at once (a first page's count and rows): a quarter of the pool
  // in searches is at most half of its connections.
  const slots = db.kind === 'postgres' ? Math.max(1, Math.floor((db.pool.options.max ?? 10) / 4)) : 1;
  const gate = createGate(slots);
  const bounded: Queryable = db.kind === 'postgres' ? { query: timedQuery(db, timeoutMs) } : db.pool;
  return {
    async run(searched, work) {
      if (!searched) return work(db.pool);
      const release = await gate.enter(timeoutMs);
      try {
        return await work(bounded);
      } catch (error) {
        if (pgErrorCode(error) === QUERY_CANCELED) throw new BusyError(SEARCH_TOO_LONG_MESSAGE);
        throw error;
      } finally {
        release();
      }
    },
  };
}

/**
 * A statement on a connection of its own whose statement_timeout is set for it and reset after, so the
 * pool's other users (the writer, projections, rebuilds) never inherit it.
 */
function timedQuery(db: Database, timeoutMs: number): Queryable['query'] {
  return (async (...args: unknown[]) => {
    const client = await db.pool.connect();
    let broken: Error | undefined;
    const onError = (error: Error) => (broken = error);
    client.on('error', onError);
    try {
      await client.query(`SET statement_timeout = ${Math.trunc(timeoutMs)}`);
      return await (client.query as (...a: unknown[]) => Promise<unknown>)(...args);
    } finally {
      if (!broken) await client.query('RESET statement_timeout').catch((error: Error) => (broken = error));
      client.off('error', onError);
      client.release(broken);
    }
  }) as Queryable['query'];
}

/** A counting semaphore whose waiters give up (503) after `timeoutMs`. */
function createGate(slots: number) {
  let free = slots;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else free += 1;
  };
  return {
    enter(timeoutMs: number): Promise<() => void> {
      if (free > 0) {
        free -= 1;
        return Promise.resolve(once(release));
      }
      return new Promise((resolve, reject) => {
        const turn = () => {
          clearTimeout(timer);
          resolve(once(release));
        };
        const timer = setTimeout(() => {
          waiting.splice(waiting.indexOf(turn), 1);
          reject(new BusyError(SEARCH_BUSY_MESSAGE));
        }, timeoutMs);
        waiting.push(turn);
      });
    },
  };
}

const once = (fn: () => void) => {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
};
