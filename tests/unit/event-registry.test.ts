import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EventRegistry, defineEvent } from '#events/registry.ts';

const Renamed = defineEvent({
  type: 'ThingRenamed',
  schemaVersion: 3,
  schema: z.object({ id: z.string(), name: z.string(), by: z.string() }),
  upcasters: {
    1: (data) => ({ ...(data as { id: string; title: string }), name: (data as { title: string }).title }),
    2: (data) => ({ ...(data as object), by: 'unknown' }),
  },
});
const registry = new EventRegistry([Renamed]);

describe('event registry', () => {
  it('lifts old schema versions step by step and validates the result', () => {
    expect(registry.upcast('ThingRenamed', 1, { id: 'a', title: 'Old' })).toMatchObject({
      id: 'a',
      name: 'Old',
      by: 'unknown',
    });
    expect(registry.upcast('ThingRenamed', 2, { id: 'a', name: 'Two' })).toEqual({
      id: 'a',
      name: 'Two',
      by: 'unknown',
    });
    expect(() => registry.upcast('ThingRenamed', 1, { id: 'a' })).toThrow();
  });

  it('fails loudly on unknown types and versions', () => {
    expect(() => registry.upcast('Nope', 1, {})).toThrow('unknown event type Nope');
    expect(() => registry.upcast('ThingRenamed', 4, {})).toThrow('schema version 4');
    expect(() => registry.upcast('ThingRenamed', 0, {})).toThrow('schema version 0');
    expect(() => registry.versionOf('Nope')).toThrow('unknown event type');
  });

  it('validates data before it is written', () => {
    expect(registry.validate('ThingRenamed', { id: 'a', name: 'n', by: 'b' })).toEqual({
      id: 'a',
      name: 'n',
      by: 'b',
    });
    expect(() => registry.validate('ThingRenamed', { id: 'a' })).toThrow();
  });

  it('refuses a type defined twice', () => {
    expect(() => new EventRegistry([Renamed, Renamed])).toThrow('defined twice');
  });
});
