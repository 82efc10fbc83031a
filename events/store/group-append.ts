import type { Outcome } from '../command.ts';
import type { Queryable } from '#infra/db/database.ts';

/** One command's write in a group: events to append under optimistic concurrency, or an outcome alone. */
export type GroupItem =
  | {
      kind: 'append';
      stream: string;
      expectedVersion: number;
      /** Already validated and serialized. */
      events: readonly { type: string; schemaVersion: number; data: string }[];
      commandId: string;
      metadata: string;
    }
  | { kind: 'record'; stream: string; commandId: string; outcome: Outcome };

/** Per item: its outcome, or `conflict` (the stream had moved), or `duplicate` (handled before). */
export type GroupResult =
  | { kind: 'appended'; outcome: Extract<Outcome, { status: 'accepted' }> }
  | { kind: 'conflict' }
  | { kind: 'duplicate'; outcome: Outcome }
  | { kind: 'recorded'; outcome: Outcome };

/**
 * Many commands' writes in one statement, so one round trip and one commit serve them all. Each item
 * keeps the guarantees of a single append (decision 0003):
 *  - `seen`: an item whose command id already has an outcome writes nothing and gets that outcome
 *    (looked up by key per item: a join let the planner hash the whole outcomes table on every append),
 *  - `u` / `i`: each stream moves from its own expected version — an UPDATE guarded by the version for
 *    an existing stream, an INSERT … DO NOTHING for a new one — and a stream that had moved is simply
 *    missing from `s`: that item reports a conflict, and the others are written,
 *  - `e` inserts the events of the items that moved, `o` records their outcomes,
 *  - `rec` records the outcomes that append nothing (rejections, no-ops); the first one recorded wins.
 * The caller puts every stream and every command id at most once in a group. A unique violation (a
 * concurrent delivery of the same command) or a deadlock aborts the whole statement; the caller then
 * writes the items one by one.
 */
export const groupAppendSql = `
WITH req AS (
  SELECT * FROM unnest($1::int[], $2::text[], $3::int[], $4::int[], $5::text[], $6::jsonb[], $7::jsonb[])
    AS r(item, stream, expected, n, command_id, metadata, given)
), seen AS (
  SELECT item, outcome FROM (
    SELECT r.item, (SELECT c.outcome FROM command_outcomes c WHERE c.command_id = r.command_id) AS outcome
    FROM req r
  ) looked_up WHERE outcome IS NOT NULL
), todo AS (
  SELECT r.* FROM req r WHERE r.given IS NULL AND NOT EXISTS (SELECT 1 FROM seen WHERE seen.item = r.item)
), u AS (
  UPDATE event_streams es SET version = t.expected + t.n FROM todo t
  WHERE es.stream = t.stream AND es.version = t.expected AND t.expected > 0
  RETURNING es.stream, es.version
), i AS (
  INSERT INTO event_streams (stream, version)
  SELECT t.stream, t.n FROM todo t WHERE t.expected = 0
  ON CONFLICT (stream) DO NOTHING
  RETURNING stream, version
), s AS (
  SELECT t.item, t.stream, t.expected, t.command_id, t.metadata, m.version
  FROM todo t JOIN (SELECT * FROM u UNION ALL SELECT * FROM i) m ON m.stream = t.stream
), e AS (
  INSERT INTO events (stream, stream_version, type, schema_version, data, metadata, command_id)
  SELECT s.stream, s.expected + x.ord, x.type, x.schema_version, x.data, s.metadata, s.command_id
  FROM s JOIN unnest($8::int[], $9::int[], $10::text[], $11::smallint[], $12::jsonb[])
    AS x(item, ord, type, schema_version, data) ON x.item = s.item
  ORDER BY s.item, x.ord
  RETURNING stream, position
), o AS (
  INSERT INTO command_outcomes (command_id, stream, outcome)
  SELECT s.command_id, s.stream, jsonb_build_object(
    'status', 'accepted',
    'positions', (SELECT jsonb_agg(e.position ORDER BY e.position) FROM e WHERE e.stream = s.stream),
    'transactionId', pg_current_xact_id()::text,
    'streamVersion', s.version)
  FROM s
  RETURNING command_id, outcome
), rec AS (
  INSERT INTO command_outcomes (command_id, stream, outcome)
  SELECT r.command_id, r.stream, r.given FROM req r
  WHERE r.given IS NOT NULL AND NOT EXISTS (SELECT 1 FROM seen WHERE seen.item = r.item)
  ON CONFLICT (command_id) DO NOTHING
  RETURNING command_id, outcome
)
SELECT r.item, o.outcome AS appended, rec.outcome AS recorded, seen.outcome AS seen
FROM req r
LEFT JOIN o ON o.command_id = r.command_id
LEFT JOIN rec ON rec.command_id = r.command_id
LEFT JOIN seen ON seen.item = r.item`;

interface Row {
  item: number;
  appended: Outcome | null;
  recorded: Outcome | null;
  seen: Outcome | null;
}

/** Writes `items` in one statement; results in the items' order. */
export async function appendGroup(db: Queryable, items: readonly GroupItem[]): Promise<GroupResult[]> {
  const events = items.flatMap((item, index) =>
    item.kind === 'append' ? item.events.map((event, ord) => ({ index, ord: ord + 1, event })) : [],
  );
  // Named: prepared once per connection, so the long statement is not parsed and planned every time.
  const { rows } = await db.query<Row>({
    name: 'rivals-append-group',
    text: groupAppendSql,
    values: [
      items.map((_, index) => index),
      items.map((item) => item.stream),
      items.map((item) => (item.kind === 'append' ? item.expectedVersion : 0)),
      items.map((item) => (item.kind === 'append' ? item.events.length : 0)),
      items.map((item) => item.commandId),
      items.map((item) => (item.kind === 'append' ? item.metadata : null)),
      items.map((item) => (item.kind === 'record' ? JSON.stringify(item.outcome) : null)),
      events.map((e) => e.index),
      events.map((e) => e.ord),
      events.map((e) => e.event.type),
      events.map((e) => e.event.schemaVersion),
      events.map((e) => e.event.data),
    ],
  });
  const byItem = new Map(rows.map((row) => [row.item, row]));
  return items.map((item, index): GroupResult => {
    const row = byItem.get(index);
    if (item.kind === 'record')
      // Lost a race with a concurrent first recording not yet visible: ours stands, as in recordOutcome.
      return { kind: 'recorded', outcome: row?.recorded ?? row?.seen ?? item.outcome };
    if (row?.seen) return { kind: 'duplicate', outcome: row.seen };
    if (row?.appended)
      return { kind: 'appended', outcome: row.appended as Extract<Outcome, { status: 'accepted' }> };
    return { kind: 'conflict' };
  });
}
