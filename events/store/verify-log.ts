import type { Queryable } from '#infra/db/database.ts';
import type { EventRegistry } from '../registry.ts';

export interface LogProblem {
  kind: 'stream-versions' | 'stream-head' | 'commit-order' | 'schema' | 'outcome';
  message: string;
}

export interface VerifyResult {
  events: number;
  streams: number;
  outcomes: number;
  /** The first `limit` problems found by each check. */
  problems: LogProblem[];
}

/**
 * Checks the log is what every reader assumes, in constant memory (the database does the set
 * work; events are parsed a batch at a time):
 *  - every stream's versions run 1, 2, 3… without gaps, and its recorded version is its last event's;
 *  - within a stream, positions and transactions grow with the version (commit order agrees);
 *  - every event parses against its schema after upcasting;
 *  - every accepted command outcome names positions of events that exist and belong to that command.
 */
export async function verifyLog(
  db: Queryable,
  registry: EventRegistry,
  options: { limit?: number; batchSize?: number; onProgress?: (checked: number) => void } = {},
): Promise<VerifyResult> {
  const limit = options.limit ?? 20;
  const problems: LogProblem[] = [];

  const { rows: gaps } = await db.query<{
    stream: string;
    stream_version: number;
    previous: number | null;
    position: number;
    previous_position: number | null;
    order_ok: boolean;
  }>(
    `SELECT stream, stream_version, previous, position, previous_position, order_ok FROM (
       SELECT stream, stream_version, position,
              lag(stream_version) OVER w AS previous,
              lag(position) OVER w AS previous_position,
              (lag(position) OVER w IS NULL OR (lag(position) OVER w < position AND lag(transaction_id) OVER w <= transaction_id)) AS order_ok
       FROM events WINDOW w AS (PARTITION BY stream ORDER BY stream_version)
     ) x
     WHERE stream_version <> coalesce(previous, 0) + 1 OR NOT order_ok
     LIMIT $1`,
    [limit],
  );
  for (const g of gaps) {
    if (g.stream_version !== (g.previous ?? 0) + 1) {
      problems.push({
        kind: 'stream-versions',
        message:
          g.previous === null
            ? `stream ${g.stream} starts at version ${g.stream_version}, not 1 (position ${g.position})`
            : `stream ${g.stream} jumps from version ${g.previous} to ${g.stream_version} (position ${g.position})`,
      });
    }
    if (!g.order_ok) {
      problems.push({
        kind: 'commit-order',
        message: `stream ${g.stream} version ${g.stream_version} is at position ${g.position}, before version ${g.previous ?? 0} at position ${g.previous_position} (or in an older transaction)`,
      });
    }
  }

  const { rows: heads } = await db.query<{ stream: string; version: number; last: number | null }>(
    `SELECT s.stream, s.version, m.last FROM event_streams s
     LEFT JOIN (SELECT stream, max(stream_version) AS last FROM events GROUP BY stream) m USING (stream)
     WHERE s.version <> coalesce(m.last, 0)
     LIMIT $1`,
    [limit],
  );
  for (const h of heads) {
    problems.push({
      kind: 'stream-head',
      message: `stream ${h.stream} is recorded at version ${h.version} but its last event is version ${h.last ?? 0}`,
    });
  }

  const { rows: missing } = await db.query<{ command_id: string; position: string }>(
    `SELECT o.command_id, p.value AS position
     FROM command_outcomes o
     CROSS JOIN LATERAL jsonb_array_elements_text(
       CASE WHEN jsonb_typeof(o.outcome->'positions') = 'array' THEN o.outcome->'positions' ELSE '[]'::jsonb END
     ) AS p(value)
     WHERE o.outcome->>'status' = 'accepted'
       AND NOT EXISTS (SELECT 1 FROM events e WHERE e.position = p.value::bigint AND e.command_id = o.command_id)
     LIMIT $1`,
    [limit],
  );
  for (const m of missing) {
    problems.push({
      kind: 'outcome',
      message: `command ${m.command_id} was accepted with the event at position ${m.position}, which does not exist (or belongs to another command)`,
    });
  }

  const batchSize = options.batchSize ?? 2_000;
  let after = 0;
  let events = 0;
  let schemaProblems = 0;
  for (;;) {
    const { rows } = await db.query<{
      position: number;
      type: string;
      schema_version: number;
      data: unknown;
    }>(
      'SELECT position, type, schema_version, data FROM events WHERE position > $1 ORDER BY position LIMIT $2',
      [after, batchSize],
    );
    for (const row of rows) {
      try {
        registry.validate(row.type, registry.upcast(row.type, row.schema_version, row.data));
      } catch (error) {
        if (schemaProblems++ < limit) {
          problems.push({
            kind: 'schema',
            message: `event at position ${row.position} (${row.type} v${row.schema_version}) does not parse: ${oneLine(error)}`,
          });
        }
      }
    }
    events += rows.length;
    options.onProgress?.(events);
    const last = rows.at(-1);
    if (!last || rows.length < batchSize) break;
    after = last.position;
  }

  const { rows: counts } = await db.query<{ streams: number; outcomes: number }>(
    'SELECT (SELECT count(*) FROM event_streams)::int AS streams, (SELECT count(*) FROM command_outcomes)::int AS outcomes',
  );
  return { events, streams: counts[0]?.streams ?? 0, outcomes: counts[0]?.outcomes ?? 0, problems };
}

function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  try {
    // zod errors are JSON lists of issues: name the first.
    const issues = JSON.parse(message) as { path?: unknown[]; message?: string }[];
    const first = issues[0];
    if (first) return `${first.path?.join('.') || '(root)'}: ${first.message ?? 'invalid'}`;
  } catch {
    // not JSON
  }
  return message.replace(/\s+/g, ' ').slice(0, 200);
}
