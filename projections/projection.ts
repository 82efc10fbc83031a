import type { RecordedEvent } from '#events/envelope.ts';
import type { Queryable } from '#infra/db/database.ts';

/**
 * Real table names for a projection's logical tables: the live ones, or `<name>__shadow` during a
 * rebuild. Names come only from the projection's own `tables` list, never from input.
 */
export type TableNames<T extends string = string> = Readonly<Record<T, string>>;

export interface Projection<T extends string = string, N extends string = string> {
  /** Its name everywhere (checkpoints, `replay --projection`, read-your-writes waits); see ProjectionName. */
  readonly name: N;
  /** Bump to rebuild the read model from the first event. */
  readonly version: number;
  /** The tables this projection owns: emptied on rebuild, shadowed during a replay. */
  readonly tables: readonly T[];
  /** The event types it reads; others are skipped in the database, never fetched. */
  readonly handles: readonly string[];
  /**
   * Applies a batch of events in the caller's transaction. Must be idempotent per batch. `memo` is
   * given only while the projection alone writes the tables (a rebuild into shadow tables): values kept
   * there between batches (a counter, say) spare it a query per batch; never anything that grows.
   */
  apply(
    db: Queryable,
    events: readonly RecordedEvent[],
    tables: TableNames<T>,
    memo?: Map<string, unknown>,
  ): Promise<void>;
}

/** Declares a projection keeping its name's literal type, so ProjectionName (all-projections.ts) lists it. */
export const defineProjection = <const N extends string, T extends string>(
  projection: Projection<T, N>,
): Projection<T, N> => projection;

export const liveTables = <T extends string>(projection: Projection<T>): TableNames<T> =>
  Object.fromEntries(projection.tables.map((t) => [t, t])) as unknown as TableNames<T>;

export const shadowTables = <T extends string>(projection: Projection<T>): TableNames<T> =>
  Object.fromEntries(projection.tables.map((t) => [t, `${t}__shadow`])) as unknown as TableNames<T>;
