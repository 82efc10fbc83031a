import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkEnvelopeShape,
  envelopeShapeSchema,
  InvalidCommandError,
  parseCommand,
} from '#events/command-shape.ts';
import { commandEnvelopeSchema } from '#events/command.ts';

const valid = {
  commandId: 'c1',
  correlationId: 'c1',
  actor: { id: 'u1', name: 'Ann' },
  at: '2026-01-01T00:00:00.000Z',
  replyTo: 'results:1',
  command: {
    type: 'UpdateCompetitorNote',
    payload: { competitorId: '6f1c1d2e-4b1a-4c3d-9e2f-0a1b2c3d4e5f', column: 'general', value: ' note ' },
  },
};

/** Values a field can wrongly (or rightly) hold: the edges of every check the envelope has. */
const oddValue = fc.oneof(
  fc.constantFrom(undefined, null, 0, 1, true, '', 'x', 'x'.repeat(100), 'x'.repeat(101), [], {}, ['a']),
  fc.constantFrom('AddCompetitor', 'NoSuchCommand', 'toString', '__proto__', 'constructor'),
  // Times: the one form every writer sends, and near misses the database or a projection would refuse.
  fc.constantFrom(
    '2026-01-01T00:00:00.000Z',
    '2026-02-30T00:00:00.000Z',
    '2026-01-01T00:00:00Z',
    '2026-01-01 00:00:00',
    'tomorrow',
  ),
  fc.string(),
);

type Path = readonly string[];
const paths: Path[] = [
  ['commandId'],
  ['correlationId'],
  ['actor'],
  ['actor', 'id'],
  ['actor', 'name'],
  ['at'],
  ['replyTo'],
  ['command'],
  ['command', 'type'],
  ['command', 'payload'],
  ['extra'],
];

function withValue(base: unknown, path: Path, value: unknown): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return value;
  const copy = { ...(base as Record<string, unknown>) };
  if (value === undefined && rest.length === 0) delete copy[head];
  else copy[head] = withValue(copy[head], rest, value);
  return copy;
}

describe('the envelope shape check at the bus boundary', () => {
  it('accepts exactly what its zod statement accepts, and returns what zod returns', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...paths), oddValue), { maxLength: 3 }), (changes) => {
        const input = changes.reduce<unknown>((acc, [path, value]) => withValue(acc, path, value), valid);
        const zod = envelopeShapeSchema.safeParse(input);
        const checked = checkEnvelopeShape(input);
        expect(checked !== undefined).toBe(zod.success);
        if (zod.success) expect(checked).toStrictEqual(zod.data);
      }),
      { numRuns: 2_000 },
    );
  });

  it('refuses a time the database would refuse or read differently, once stored', () => {
    for (const at of [
      'garbage',
      '2026-02-30T00:00:00.000Z',
      '2026-01-01T00:00:00Z',
      '+010000-01-01T00:00:00.000Z',
    ])
      expect(checkEnvelopeShape({ ...valid, at }), at).toBeUndefined();
    for (const at of ['2026-02-28T23:59:59.999Z', '0001-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z'])
      expect(checkEnvelopeShape({ ...valid, at }), at).toBeDefined();
  });

  it('refuses non-objects', () => {
    for (const value of [null, undefined, 'x', 1, [], [valid]])
      expect(checkEnvelopeShape(value)).toBeUndefined();
  });

  it('leaves the full parse to parseCommand, which gives what the whole schema gives', () => {
    const checked = checkEnvelopeShape(valid);
    expect(checked).toBeDefined();
    const full = commandEnvelopeSchema.parse(valid);
    expect({ ...checked, command: parseCommand(checked!.command) }).toStrictEqual(full);
    // The shape check lets a bad payload through; the full parse refuses it.
    const bad = checkEnvelopeShape(withValue(valid, ['command', 'payload', 'competitorId'], 'nope'));
    expect(bad).toBeDefined();
    expect(() => parseCommand(bad!.command)).toThrow(InvalidCommandError);
    expect(() => parseCommand(bad!.command)).toThrow('not a valid command envelope');
  });
});
