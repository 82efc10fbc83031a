import { checkOut, type Pool, type Queryable } from '#infra/db/database.ts';
import type { RecordedEvent } from '../envelope.ts';
import type { EventRegistry } from '../registry.ts';
import { eventColumns, recordedEvent, type EventRow } from './event-row.ts';

/** A bound of an export: an event position, or a time (events recorded at or after / before it). */
export type LogBound = { position: number } | { time: Date };

export interface LogFilter {
  from?: LogBound;
  to?: LogBound;
  /** Only these event types (any when empty). */
  types?: readonly string[];
  /** Only this stream. */
  stream?: string;
}

const positionOf = (b: LogBound | undefined) => (b && 'position' in b ? b.position : null);
const timeOf = (b: LogBound | undefined) => (b && 'time' in b ? b.time.toISOString() : null);

/**
 * The events matching `filter` that were committed when the export began, in commit order, a batch at
 * a time (keyset on the commit order, so memory stays constant however long the log). Data is upcast
 * to the current schema.
 *
 * One read-only REPEATABLE READ snapshot for the whole export, not the commit-safe horizon the
 * projections read below: that horizon stops at the oldest transaction still able to write the log
 * (decision 0028; before it, any transaction in the cluster), so a writer left open made the export stop
 * early, silently, at exit 0. A read-only transaction takes no transaction id, so it holds nobody
 * else's horizon back.
 */
export async function* exportEvents(
  pool: Pick<Pool, 'connect'>,
  registry: EventRegistry,
  filter: LogFilter = {},
  batchSize = 2_000,
): AsyncGenerator<RecordedEvent> {
  // A connection lost midway (Postgres restarted) fails the export with its error, not the process.
  const { client: db, release } = await checkOut(pool);
  let done = false;
  try {
    await db.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    yield* readBatches(db, registry, filter, batchSize);
    await db.query('COMMIT');
    done = true;
  } finally {
    // Also when the reader stops early (`| head`) or fails: end the snapshot, give the connection back.
    if (!done) await db.query('ROLLBACK').catch(() => undefined);
    release();
  }
}

async function* readBatches(
  db: Queryable,
  registry: EventRegistry,
  filter: LogFilter,
  batchSize: number,
): AsyncGenerator<RecordedEvent> {
  let after = { transactionId: '0', position: 0 };
  const types = filter.types && filter.types.length > 0 ? [...filter.types] : null;
  for (;;) {
    const { rows } = await db.query<EventRow>(
      `SELECT ${eventColumns}
       FROM events
       WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
         AND ($3::bigint IS NULL OR position >= $3)
         AND ($4::bigint IS NULL OR position <= $4)
         AND ($5::timestamptz IS NULL OR recorded_at >= $5)
         AND ($6::timestamptz IS NULL OR recorded_at <= $6)
         AND ($7::text[] IS NULL OR type = ANY($7))
         AND ($8::text IS NULL OR stream = $8)
       ORDER BY events.transaction_id, events.position
       LIMIT $9`,
      [
        after.transactionId,
        after.position,
        positionOf(filter.from),
        positionOf(filter.to),
        timeOf(filter.from),
        timeOf(filter.to),
        types,
        filter.stream ?? null,
        batchSize,
      ],
    );
    for (const row of rows) yield recordedEvent(row, registry);
    const last = rows.at(-1);
    if (!last || rows.length < batchSize) return;
    after = { transactionId: last.xid, position: last.position };
  }
}
