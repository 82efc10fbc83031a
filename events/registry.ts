import type { z } from 'zod';
import { composeStrings } from './text.ts';

/**
 * One event type: its current schema version, its schema, and upcasters that lift each older
 * version's data one step. A stored event type is never renamed; a new shape gets a new version.
 */
export interface EventDefinition<T extends string = string, S extends z.ZodType = z.ZodType> {
  type: T;
  schemaVersion: number;
  schema: S;
  /** `upcasters[v]` turns data of version v into version v + 1. */
  upcasters?: Record<number, (data: unknown) => unknown>;
}

export function defineEvent<T extends string, S extends z.ZodType>(
  definition: EventDefinition<T, S>,
): EventDefinition<T, S> {
  return definition;
}

export class UnknownEventError extends Error {
  override name = 'UnknownEventError';
}

export class EventRegistry {
  private readonly byType = new Map<string, EventDefinition>();

  constructor(definitions: readonly EventDefinition[]) {
    for (const definition of definitions) {
      if (this.byType.has(definition.type)) throw new Error(`event type ${definition.type} defined twice`);
      this.byType.set(definition.type, definition);
    }
  }

  /** Whether `type` is an event this code defines. */
  knows(type: string): boolean {
    return this.byType.has(type);
  }

  /** Every event type, sorted. */
  types(): string[] {
    return [...this.byType.keys()].sort();
  }

  /** The current schema version for a type we are about to write; unknown types fail loudly. */
  versionOf(type: string): number {
    return this.definition(type).schemaVersion;
  }

  /** Validates data about to be written. */
  validate(type: string, data: unknown): unknown {
    return this.definition(type).schema.parse(data);
  }

  /**
   * Lifts stored data to the current version; unknown types or versions fail loudly. Data stored at
   * the current version was validated when it was written and is trusted; lifted data is validated.
   */
  upcast(type: string, schemaVersion: number, data: unknown): unknown {
    const definition = this.definition(type);
    if (schemaVersion > definition.schemaVersion || schemaVersion < 1) {
      throw new UnknownEventError(
        `event ${type} has schema version ${schemaVersion}; this code knows up to ${definition.schemaVersion}`,
      );
    }
    // Composed (NFC) whatever its version: events written before text was composed at the edge still
    // read as the same text a search or a name check would type (decision 0024).
    if (schemaVersion === definition.schemaVersion) return composeStrings(data);
    let current = data;
    for (let v = schemaVersion; v < definition.schemaVersion; v++) {
      const lift = definition.upcasters?.[v];
      if (!lift) throw new UnknownEventError(`event ${type} has no upcaster from schema version ${v}`);
      current = lift(current);
    }
    return definition.schema.parse(composeStrings(current));
  }

  private definition(type: string): EventDefinition {
    const definition = this.byType.get(type);
    if (!definition) throw new UnknownEventError(`unknown event type ${type}`);
    return definition;
  }
}
