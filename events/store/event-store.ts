import type { EventRegistry } from '../registry.ts';
import type { Queryable } from '#infra/db/database.ts';
import { createEventLogReader, type EventLogReader } from './event-log-reader.ts';
import { createEventLogWriter, type EventLogWriter, type EventLogWriterOptions } from './event-log-writer.ts';
import { createFoldSnapshots, type FoldSnapshots } from './fold-snapshots.ts';

/**
 * The event log, both halves over one database. Code that only reads the log (projections, log tools)
 * or only writes it (seeding) takes `EventLogReader` or `EventLogWriter`; deciding a command needs both
 * (and a fold of the whole log, its saved snapshots).
 */
export type EventStore = EventLogWriter & EventLogReader & FoldSnapshots;

export const createEventStore = (
  db: Queryable,
  registry: EventRegistry,
  options: EventLogWriterOptions = {},
): EventStore => ({
  ...createEventLogWriter(db, registry, options),
  ...createEventLogReader(db, registry),
  ...createFoldSnapshots(db),
});
