import type { Outcome } from '../command.ts';
import type { Checkpoint, EventMetadata, NewEvent, RecordedEvent } from '../envelope.ts';
import type { EventRegistry } from '../registry.ts';
import { eventColumns, recordedEvent, type EventRow } from './event-row.ts';
import { appendGroup, type GroupItem, type GroupResult } from './group-append.ts';
import { GroupCommitter, type GroupCommitOptions } from './group-commit.ts';
import { pgErrorCode, type Queryable } from '#infra/db/database.ts';
import { notify, notifyChannels } from '#infra/db/notify-channels.ts';

export type AppendResult =
  | { kind: 'appended'; outcome: Extract<Outcome, { status: 'accepted' }> }
  | { kind: 'conflict' }
  | { kind: 'duplicate'; outcome: Outcome };

export interface StreamState {
  version: number;
  events: RecordedEvent[];
}

/**
 * One statement does the whole append, so it costs one round trip and one commit:
 *  - `seen` is the command's earlier outcome, if it was handled before (a redelivery): then nothing is written,
 *  - `s` moves the stream from the expected version (no row: someone else wrote first → conflict),
 *  - `e` inserts the events after it,
 *  - `o` records the command's outcome. Two deliveries racing each other collide on its primary key,
 *    and the whole statement of the later one rolls back.
 */
const appendSql = `
WITH seen AS (
  SELECT outcome FROM command_outcomes WHERE command_id = $8
), s AS (
  INSERT INTO event_streams AS es (stream, version)
  SELECT $1, $2::int + $3::int WHERE NOT EXISTS (SELECT 1 FROM seen)
  ON CONFLICT (stream) DO UPDATE SET version = EXCLUDED.version WHERE es.version = $2::int
  RETURNING version
), e AS (
  INSERT INTO events (stream, stream_version, type, schema_version, data, metadata, command_id)
  SELECT $1, $2::int + x.ord::int, x.type, x.schema_version, x.data, $7::jsonb, $8
  FROM s, unnest($4::text[], $5::smallint[], $6::jsonb[]) WITH ORDINALITY AS x(type, schema_version, data, ord)
  RETURNING position
), o AS (
  INSERT INTO command_outcomes (command_id, stream, outcome)
  SELECT $8, $1, jsonb_build_object(
    'status', 'accepted',
    'positions', (SELECT jsonb_agg(position ORDER BY position) FROM e),
    'transactionId', pg_current_xact_id()::text,
    'streamVersion', s.version)
  FROM s
  RETURNING outcome
)
SELECT outcome, false AS duplicate FROM o
UNION ALL
SELECT outcome, true AS duplicate FROM seen`;

export interface EventStoreOptions {
  /**
   * Concurrent appends and recorded outcomes share statements (group commit, decision 0013); on by
   * default. `false` writes each in a statement of its own.
   */
  groupCommit?: GroupCommitOptions | false;
}

export class EventStore {
  private readonly group: GroupCommitter | undefined;

  constructor(
    private readonly db: Queryable,
    private readonly registry: EventRegistry,
    options: EventStoreOptions = {},
  ) {
    this.group =
      options.groupCommit === false
        ? undefined
        : new GroupCommitter(
            (items) => appendGroup(this.db, items),
            (item) => this.writeOne(item),
            options.groupCommit,
          );
  }

  /** Appends `events` to `stream` if it is at `expectedVersion`, recording the command's outcome with them. */
  async append(
    stream: string,
    events: readonly NewEvent[],
    expectedVersion: number,
    commandId: string,
    metadata: EventMetadata,
  ): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event; use recordOutcome for none');
    const item: GroupItem = {
      kind: 'append',
      stream,
      expectedVersion,
      events: events.map((e) => ({
        type: e.type,
        schemaVersion: this.registry.versionOf(e.type),
        data: JSON.stringify(this.registry.validate(e.type, e.data)),
      })),
      commandId,
      metadata: JSON.stringify(metadata),
    };
    const result = this.group ? await this.group.submit(item) : await this.appendOne(item);
    if (result.kind === 'recorded') throw new Error('an append was answered as a recorded outcome');
    return result;
  }

  private writeOne(item: GroupItem): Promise<GroupResult> {
    return item.kind === 'append'
      ? this.appendOne(item)
      : this.recordOne(item.commandId, item.stream, item.outcome).then((outcome) => ({
          kind: 'recorded' as const,
          outcome,
        }));
  }

  /** One append in a statement of its own. */
  private async appendOne(item: Extract<GroupItem, { kind: 'append' }>): Promise<AppendResult> {
    const { stream, events, expectedVersion, commandId } = item;
    const types = events.map((e) => e.type);
    const versions = events.map((e) => e.schemaVersion);
    const data = events.map((e) => e.data);
    try {
      const { rows } = await this.db.query<{ outcome: Outcome; duplicate: boolean }>({
        name: 'rivals-append',
        text: appendSql,
        values: [stream, expectedVersion, events.length, types, versions, data, item.metadata, commandId],
      });
      const row = rows[0];
      if (!row) return { kind: 'conflict' };
      if (row.duplicate) return { kind: 'duplicate', outcome: row.outcome };
      return { kind: 'appended', outcome: row.outcome as Extract<Outcome, { status: 'accepted' }> };
    } catch (error) {
      if (pgErrorCode(error) !== '23505') throw error;
      const first = await this.findOutcome(commandId);
      // A unique violation that is not our command id is a lost race on the stream version.
      return first ? { kind: 'duplicate', outcome: first } : { kind: 'conflict' };
    }
  }

  /**
   * Appends many new streams in one statement (bulk seeding): every stream must not exist yet, each
   * gets its events from version 1, and each stream's command id records its outcome, exactly as
   * separate appends would. Any existing stream makes the whole batch fail and write nothing.
   */
  async appendNewStreams(
    streams: readonly { stream: string; events: readonly NewEvent[]; commandId: string }[],
    metadata: Omit<EventMetadata, 'commandId'>,
  ): Promise<number> {
    const rows = streams.flatMap(({ stream, events, commandId }) =>
      events.map((e, i) => ({
        stream,
        version: i + 1,
        type: e.type,
        schemaVersion: this.registry.versionOf(e.type),
        data: JSON.stringify(this.registry.validate(e.type, e.data)),
        metadata: JSON.stringify({ ...metadata, commandId }),
        commandId,
      })),
    );
    const { rows: result } = await this.db.query<{ streams: number; outcomes: number }>(
      // No ON CONFLICT: an existing stream is a unique violation that rolls back the whole statement.
      `WITH s AS (
         INSERT INTO event_streams (stream, version) SELECT * FROM unnest($1::text[], $2::int[])
         RETURNING stream
       ), e AS (
         INSERT INTO events (stream, stream_version, type, schema_version, data, metadata, command_id)
         SELECT x.* FROM unnest($3::text[], $4::int[], $5::text[], $6::smallint[], $7::jsonb[], $8::jsonb[], $9::text[])
           AS x(stream, stream_version, type, schema_version, data, metadata, command_id)
         RETURNING position, stream, command_id
       ), o AS (
         INSERT INTO command_outcomes (command_id, stream, outcome)
         SELECT command_id, stream, jsonb_build_object('status', 'accepted', 'positions', jsonb_agg(position ORDER BY position),
           'transactionId', pg_current_xact_id()::text, 'streamVersion', count(*))
         FROM e GROUP BY command_id, stream
         RETURNING 1
       )
       SELECT (SELECT count(*) FROM s)::int AS streams, (SELECT count(*) FROM o)::int AS outcomes`,
      [
        streams.map((s) => s.stream),
        streams.map((s) => s.events.length),
        rows.map((r) => r.stream),
        rows.map((r) => r.version),
        rows.map((r) => r.type),
        rows.map((r) => r.schemaVersion),
        rows.map((r) => r.data),
        rows.map((r) => r.metadata),
        rows.map((r) => r.commandId),
      ],
    );
    return result[0]?.streams === streams.length ? rows.length : 0;
  }

  /**
   * Wakes projection runners. Called after commits, outside any transaction (a NOTIFY inside the append
   * would serialize all commits on Postgres's notification lock); writers call it once per batch.
   */
  async notifyAppended(): Promise<void> {
    await notify(this.db, notifyChannels.eventsAppended);
  }

  /** Records an outcome that appended nothing (a rejection, a no-op); returns the first one recorded. */
  async recordOutcome(commandId: string, stream: string, outcome: Outcome): Promise<Outcome> {
    if (!this.group) return this.recordOne(commandId, stream, outcome);
    const result = await this.group.submit({ kind: 'record', stream, commandId, outcome });
    if (result.kind !== 'recorded') throw new Error(`a recorded outcome was answered as ${result.kind}`);
    return result.outcome;
  }

  private async recordOne(commandId: string, stream: string, outcome: Outcome): Promise<Outcome> {
    const { rows } = await this.db.query<{ outcome: Outcome }>(
      `WITH ins AS (
         INSERT INTO command_outcomes (command_id, stream, outcome) VALUES ($1, $2, $3)
         ON CONFLICT (command_id) DO NOTHING RETURNING outcome)
       SELECT outcome FROM ins
       UNION ALL SELECT outcome FROM command_outcomes WHERE command_id = $1 AND NOT EXISTS (SELECT 1 FROM ins)`,
      [commandId, stream, JSON.stringify(outcome)],
    );
    return rows[0]?.outcome ?? outcome;
  }

  async findOutcome(commandId: string): Promise<Outcome | undefined> {
    const { rows } = await this.db.query<{ outcome: Outcome }>(
      'SELECT outcome FROM command_outcomes WHERE command_id = $1',
      [commandId],
    );
    return rows[0]?.outcome;
  }

  /** The stream's events after `afterVersion` (all by default), and the stream's version. */
  async readStream(stream: string, afterVersion = 0): Promise<StreamState> {
    const { rows } = await this.db.query<EventRow>(
      `SELECT ${eventColumns} FROM events WHERE stream = $1 AND stream_version > $2 ORDER BY stream_version`,
      [stream, afterVersion],
    );
    const events = rows.map((row) => this.toRecorded(row));
    return { version: events.at(-1)?.streamVersion ?? afterVersion, events };
  }

  /**
   * Events after `after` in commit-safe order: ordered by (transaction, position) and only below the
   * oldest transaction still running, so an event committed late can never be passed over.
   */
  async readAll(after: Checkpoint, limit: number, db: Queryable = this.db): Promise<RecordedEvent[]> {
    const { rows } = await db.query<EventRow>(
      `SELECT ${eventColumns} FROM events
       WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
         AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
       ORDER BY events.transaction_id, events.position
       LIMIT $3`,
      [after.transactionId, after.position, limit],
    );
    return rows.map((row) => this.toRecorded(row));
  }

  /**
   * Like `readAll`, but only events of the given types, for a reader that ignores the rest. When fewer
   * than `limit` come back, `scannedTo` is how far the log was read (the newest settled event, from
   * the same snapshot), so the reader's checkpoint can move past events it does not handle.
   */
  async readTypes(
    after: Checkpoint,
    types: readonly string[],
    limit: number,
    db: Queryable = this.db,
  ): Promise<{ events: RecordedEvent[]; scannedTo: Checkpoint | undefined }> {
    const { rows } = await db.query<
      EventRow & { horizon_xid: string | null; horizon_position: number | null }
    >(
      `WITH h AS (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin),
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
      [after.transactionId, after.position, types, limit],
    );
    const found = rows.filter((r) => r.position !== null);
    const events = found.map((row) => this.toRecorded(row));
    const horizon = rows[0]?.horizon_xid
      ? { transactionId: rows[0].horizon_xid, position: rows[0].horizon_position ?? 0 }
      : undefined;
    return { events, scannedTo: events.length < limit ? horizon : undefined };
  }

  /** Whether events exist after `after` that `readAll` cannot return yet (their writers still run). */
  async hasUnsettled(after: Checkpoint, db: Queryable = this.db): Promise<boolean> {
    const { rows } = await db.query<{ unsettled: boolean }>(
      `SELECT EXISTS (
         SELECT 1 FROM events WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
       ) AS unsettled`,
      [after.transactionId, after.position],
    );
    return rows[0]?.unsettled ?? false;
  }

  /** The newest committed event in commit order, or undefined for an empty log. */
  async headCheckpoint(): Promise<Checkpoint | undefined> {
    const { rows } = await this.db.query<{ xid: string; position: number }>(
      'SELECT transaction_id::text AS xid, position FROM events ORDER BY transaction_id DESC, position DESC LIMIT 1',
    );
    const row = rows[0];
    return row ? { transactionId: row.xid, position: row.position } : undefined;
  }

  /** The newest position, for status pages and lag. */
  async headPosition(): Promise<number> {
    const { rows } = await this.db.query<{ head: number | null }>('SELECT max(position) AS head FROM events');
    return rows[0]?.head ?? 0;
  }

  private toRecorded(row: EventRow): RecordedEvent {
    return recordedEvent(row, this.registry);
  }
}
