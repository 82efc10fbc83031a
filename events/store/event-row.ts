import type { EventMetadata, RecordedEvent } from '../envelope.ts';
import type { EventRegistry } from '../registry.ts';

/** An `events` row as every reader selects it (`eventColumns`). */
export interface EventRow {
  position: number;
  /** The xid8 as text; named apart from the column so ORDER BY never sorts the text. */
  xid: string;
  stream: string;
  stream_version: number;
  type: string;
  schema_version: number;
  data: unknown;
  metadata: EventMetadata;
  recorded_at: Date;
}

export const eventColumns =
  'position, transaction_id::text AS xid, stream, stream_version, type, schema_version, data, metadata, recorded_at';

/** A row as a recorded event, its data upcast to the current schema. */
export function recordedEvent(row: EventRow, registry: EventRegistry): RecordedEvent {
  return {
    position: row.position,
    transactionId: row.xid,
    stream: row.stream,
    streamVersion: row.stream_version,
    type: row.type,
    schemaVersion: row.schema_version,
    data: registry.upcast(row.type, row.schema_version, row.data),
    metadata: row.metadata,
    recordedAt: row.recorded_at,
  };
}
