import type { Outcome } from '../command.ts';
import type { EventMetadata, NewEvent } from '../envelope.ts';
import type { EventRegistry } from '../registry.ts';
import { pgErrorCode, type Queryable } from '#infra/db/database.ts';
import { notify, notifyChannels } from '#infra/db/notify-channels.ts';
import { appendGroup, type GroupItem, type GroupResult } from './group-append.ts';
import { GroupCommitter, type GroupCommitOptions } from './group-commit.ts';

export type AppendResult =
  | { kind: 'appended'; outcome: Extract<Outcome, { status: 'accepted' }> }
  | { kind: 'conflict' }
  | { kind: 'duplicate'; outcome: Outcome };

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

export interface EventLogWriterOptions {
  /**
   * Concurrent appends and recorded outcomes share statements (group commit, decision 0014); on by
   * default. `false` writes each in a statement of its own.
   */
  groupCommit?: GroupCommitOptions | false;
}

type AppendItem = Extract<GroupItem, { kind: 'append' }>;

/**
 * The write half of the event log: appends (each with the command's outcome, in one statement, or
 * grouped with concurrent ones), outcomes of commands that appended nothing, and the wake-up for
 * projection runners.
 */
export function createEventLogWriter(
  db: Queryable,
  registry: EventRegistry,
  options: EventLogWriterOptions = {},
) {
  /** One append in a statement of its own. */
  async function appendOne(item: AppendItem): Promise<AppendResult> {
    const { stream, events, expectedVersion, commandId } = item;
    try {
      // Named: prepared once per connection, so the statement is not parsed and planned every time.
      const { rows } = await db.query<{ outcome: Outcome; duplicate: boolean }>({
        name: 'rivals-append',
        text: appendSql,
        values: [
          stream,
          expectedVersion,
          events.length,
          events.map((e) => e.type),
          events.map((e) => e.schemaVersion),
          events.map((e) => e.data),
          item.metadata,
          commandId,
        ],
      });
      const row = rows[0];
      if (!row) return { kind: 'conflict' };
      if (row.duplicate) return { kind: 'duplicate', outcome: row.outcome };
      return { kind: 'appended', outcome: row.outcome as Extract<Outcome, { status: 'accepted' }> };
    } catch (error) {
      if (pgErrorCode(error) !== '23505') throw error;
      const first = await writer.findOutcome(commandId);
      // A unique violation that is not our command id is a lost race on the stream version.
      return first ? { kind: 'duplicate', outcome: first } : { kind: 'conflict' };
    }
  }

  /** One outcome that appended nothing, in a statement of its own; the first one recorded wins. */
  async function recordOne(commandId: string, stream: string, outcome: Outcome): Promise<Outcome> {
    const { rows } = await db.query<{ outcome: Outcome }>(
      `WITH ins AS (
         INSERT INTO command_outcomes (command_id, stream, outcome) VALUES ($1, $2, $3)
         ON CONFLICT (command_id) DO NOTHING RETURNING outcome)
       SELECT outcome FROM ins
       UNION ALL SELECT outcome FROM command_outcomes WHERE command_id = $1 AND NOT EXISTS (SELECT 1 FROM ins)`,
      [commandId, stream, JSON.stringify(outcome)],
    );
    return rows[0]?.outcome ?? outcome;
  }

  const writeOne = async (item: GroupItem): Promise<GroupResult> =>
    item.kind === 'append'
      ? appendOne(item)
      : { kind: 'recorded', outcome: await recordOne(item.commandId, item.stream, item.outcome) };

  const group =
    options.groupCommit === false
      ? undefined
      : new GroupCommitter((items) => appendGroup(db, items), writeOne, options.groupCommit);

  const writer = {
    /** Appends `events` to `stream` if it is at `expectedVersion`, recording the command's outcome with them. */
    async append(
      stream: string,
      events: readonly NewEvent[],
      expectedVersion: number,
      commandId: string,
      metadata: EventMetadata,
    ): Promise<AppendResult> {
      if (events.length === 0) throw new Error('append needs at least one event; use recordOutcome for none');
      const item: AppendItem = {
        kind: 'append',
        stream,
        expectedVersion,
        events: events.map((e) => ({
          type: e.type,
          schemaVersion: registry.versionOf(e.type),
          data: JSON.stringify(registry.validate(e.type, e.data)),
        })),
        commandId,
        metadata: JSON.stringify(metadata),
      };
      const result = group ? await group.submit(item) : await appendOne(item);
      if (result.kind === 'recorded') throw new Error('an append was answered as a recorded outcome');
      return result;
    },

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
          schemaVersion: registry.versionOf(e.type),
          data: JSON.stringify(registry.validate(e.type, e.data)),
          metadata: JSON.stringify({ ...metadata, commandId }),
          commandId,
        })),
      );
      const { rows: result } = await db.query<{ streams: number; outcomes: number }>(
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
    },

    /**
     * Wakes projection runners. Called after commits, outside any transaction (a NOTIFY inside the append
     * would serialize all commits on Postgres's notification lock); writers call it once per batch.
     */
    async notifyAppended(): Promise<void> {
      await notify(db, notifyChannels.eventsAppended);
    },

    /** Records an outcome that appended nothing (a rejection, a no-op); returns the first one recorded. */
    async recordOutcome(commandId: string, stream: string, outcome: Outcome): Promise<Outcome> {
      if (!group) return recordOne(commandId, stream, outcome);
      const result = await group.submit({ kind: 'record', stream, commandId, outcome });
      if (result.kind !== 'recorded') throw new Error(`a recorded outcome was answered as ${result.kind}`);
      return result.outcome;
    },

    async findOutcome(commandId: string): Promise<Outcome | undefined> {
      const { rows } = await db.query<{ outcome: Outcome }>(
        'SELECT outcome FROM command_outcomes WHERE command_id = $1',
        [commandId],
      );
      return rows[0]?.outcome;
    },
  };
  return writer;
}

export type EventLogWriter = ReturnType<typeof createEventLogWriter>;
