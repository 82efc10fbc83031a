import { compareCheckpoints, type Checkpoint, type RecordedEvent } from '../envelope.ts';
import type { EventRegistry } from '../registry.ts';
import { eventColumns, recordedEvent, type EventRow } from './event-row.ts';
import type { Queryable } from '#infra/db/database.ts';

export interface StreamState {
  version: number;
  events: RecordedEvent[];
}

/**
 * `h.xmin`: the commit-safe horizon, read once per statement. Only events of transactions below it are
 * read: no transaction still able to write an event is older (`log_horizon`, decision 0028).
 */
export const horizonCte = 'h AS MATERIALIZED (SELECT log_horizon() AS xmin)';

/**
 * Whether any event lies after the checkpoint. The first one in commit order, not EXISTS: under EXISTS
 * the planner may pick a sequential scan (it expects a match early), and the rows after a checkpoint
 * are the newest, at the end of the table: every idle check of every projection read the whole log.
 */
export const hasUnsettledSql = `SELECT (
  SELECT position FROM events WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
  ORDER BY transaction_id, position LIMIT 1
) IS NOT NULL AS unsettled`;

/**
 * The read half of the event log: one stream (to decide a command), the whole log in commit-safe order
 * (projections, replays, log tools), and where its head is.
 */
export function createEventLogReader(pool: Queryable, registry: EventRegistry) {
  return {
    /** The stream's events after `afterVersion` (all by default), and the stream's version. */
    async readStream(stream: string, afterVersion = 0): Promise<StreamState> {
      // Named statements on the per-command and per-batch paths: parsed and planned once per connection.
      const { rows } = await pool.query<EventRow>({
        name: 'rivals-read-stream',
        text: `SELECT ${eventColumns} FROM events WHERE stream = $1 AND stream_version > $2 ORDER BY stream_version`,
        values: [stream, afterVersion],
      });
      const events = rows.map((row) => recordedEvent(row, registry));
      return { version: events.at(-1)?.streamVersion ?? afterVersion, events };
    },

    /**
     * The events of one type in `stream` that name this competitor (`data.competitorId`), oldest
     * first: a competitor's board moves live in the ordering stream, not in its own.
     */
    async readAbout(stream: string, type: string, competitorId: string): Promise<RecordedEvent[]> {
      const { rows } = await pool.query<EventRow>(
        `SELECT ${eventColumns} FROM events
         WHERE stream = $1 AND type = $2 AND data->>'competitorId' = $3 ORDER BY stream_version`,
        [stream, type, competitorId],
      );
      return rows.map((row) => recordedEvent(row, registry));
    },

    /**
     * Events after `after` in commit-safe order: ordered by (transaction, position) and only below the
     * oldest transaction still able to write events, so an event committed late can never be passed over.
     */
    async readAll(after: Checkpoint, limit: number, db: Queryable = pool): Promise<RecordedEvent[]> {
      const { rows } = await db.query<EventRow>(
        `WITH ${horizonCte}
         SELECT ${eventColumns} FROM events
         WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
           AND transaction_id < (SELECT xmin FROM h)
         ORDER BY events.transaction_id, events.position
         LIMIT $3`,
        [after.transactionId, after.position, limit],
      );
      return rows.map((row) => recordedEvent(row, registry));
    },

    /**
     * Like `readAll`, but only events of the given types, for a reader that ignores the rest. When fewer
     * than `limit` come back, `scannedTo` is how far the log was read (the newest settled event, from
     * the same snapshot), so the reader's checkpoint can move past events it does not handle; never at or
     * behind `after`.
     */
    async readTypes(
      after: Checkpoint,
      types: readonly string[],
      limit: number,
      db: Queryable = pool,
    ): Promise<{ events: RecordedEvent[]; scannedTo: Checkpoint | undefined }> {
      const { rows } = await db.query<
        EventRow & { horizon_xid: string | null; horizon_position: number | null }
      >({
        name: 'rivals-read-types',
        text: `WITH ${horizonCte},
         horizon AS (
           SELECT e.transaction_id::text AS xid, e.position FROM events e, h
           WHERE e.transaction_id < h.xmin ORDER BY e.transaction_id DESC, e.position DESC LIMIT 1
         ),
         picked AS (
           SELECT ${eventColumns}, events.transaction_id AS tx FROM events, h
           WHERE (events.transaction_id, events.position) > ($1::xid8, $2::bigint)
             AND events.transaction_id < h.xmin AND events.type = ANY($3::text[])
           ORDER BY events.transaction_id, events.position
           LIMIT $4
         )
         SELECT p.*, (SELECT xid FROM horizon) AS horizon_xid, (SELECT position FROM horizon) AS horizon_position
         FROM (SELECT 1) one LEFT JOIN picked p ON true
         ORDER BY p.tx, p.position`,
        values: [after.transactionId, after.position, types, limit],
      });
      const found = rows.filter((r) => r.position !== null);
      const events = found.map((row) => recordedEvent(row, registry));
      const horizon = rows[0]?.horizon_xid
        ? { transactionId: rows[0].horizon_xid, position: rows[0].horizon_position ?? 0 }
        : undefined;
      // The horizon can move back (decision 0028: a transaction passed over, seen ending by the next
      // read, bounds it): a scanned-to point behind `after` would move a checkpoint back.
      const ahead = horizon && compareCheckpoints(horizon, after) > 0 ? horizon : undefined;
      return { events, scannedTo: events.length < limit ? ahead : undefined };
    },

    /** Whether events exist after `after` that `readAll` cannot return yet (their writers still run). */
    async hasUnsettled(after: Checkpoint, db: Queryable = pool): Promise<boolean> {
      const { rows } = await db.query<{ unsettled: boolean }>({
        name: 'rivals-has-unsettled',
        text: hasUnsettledSql,
        values: [after.transactionId, after.position],
      });
      return rows[0]?.unsettled ?? false;
    },

    /** The newest committed event in commit order, or undefined for an empty log. */
    async headCheckpoint(): Promise<Checkpoint | undefined> {
      const { rows } = await pool.query<{ xid: string; position: number }>(
        'SELECT transaction_id::text AS xid, position FROM events ORDER BY transaction_id DESC, position DESC LIMIT 1',
      );
      const row = rows[0];
      return row ? { transactionId: row.xid, position: row.position } : undefined;
    },

    /** The newest position, for status pages and lag. */
    /**
     * Whether any event was written by a command whose id starts with none of `commandIdPrefixes`
     * (someone used the install, not only its first start). Walks the log from its start, where such an
     * event lies in any used install, so it reads a few rows, not the log.
     */
    async hasEventsBesides(commandIdPrefixes: readonly string[]): Promise<boolean> {
      const { rows } = await pool.query(
        `SELECT 1 FROM events WHERE NOT (command_id LIKE ANY ($1::text[])) ORDER BY position LIMIT 1`,
        [commandIdPrefixes.map((prefix) => `${prefix}%`)],
      );
      return rows.length > 0;
    },

    async headPosition(): Promise<number> {
      const { rows } = await pool.query<{ head: number | null }>('SELECT max(position) AS head FROM events');
      return rows[0]?.head ?? 0;
    },
  };
}

export type EventLogReader = ReturnType<typeof createEventLogReader>;
