import type { EventRegistry } from '../registry.ts';
import type { Queryable } from '#infra/db/database.ts';
import { createEventLogReader, type EventLogReader } from './event-log-reader.ts';
import { createEventLogWriter, type EventLogWriter, type EventLogWriterOptions } from './event-log-writer.ts';

/**
 * The event log, both halves over one database. Code that only reads the log (projections, log tools)
 * or only writes it (seeding) takes `EventLogReader` or `EventLogWriter`; deciding a command needs both.
 */
export type EventStore = EventLogWriter & EventLogReader;

export const createEventStore = (
  db: Queryable,
  registry: EventRegistry,
  options: EventLogWriterOptions = {},
): EventStore => ({
  ...createEventLogWriter(db, registry, options),
  ...createEventLogReader(db, registry),
});
