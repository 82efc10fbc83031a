import { describe, expect, it } from 'vitest';
import { jsonArrays } from '#infra/db/json-arrays.ts';

const bytesOf = (json: string) => Buffer.byteLength(json);

describe('JSON arrays under a size', () => {
  it('keeps every record, in order, and each array within the bytes given, counting characters by their UTF-8 size', () => {
    const records = Array.from({ length: 50 }, (_, i) => ({
      i,
      text: '😀'.repeat(i % 7) + 'é'.repeat(i % 5),
    }));
    const arrays = jsonArrays(records, 200);
    expect(arrays.length).toBeGreaterThan(1);
    for (const json of arrays) expect(bytesOf(json)).toBeLessThanOrEqual(200);
    expect(arrays.flatMap((json) => JSON.parse(json) as unknown[])).toEqual(records);
  });

  it('puts all records in one array when they fit, and a record larger than the size alone in its own', () => {
    expect(jsonArrays([{ a: 1 }, { b: 2 }])).toEqual(['[{"a":1},{"b":2}]']);
    const big = { text: 'x'.repeat(100) };
    expect(jsonArrays([{ a: 1 }, big, { b: 2 }], 50)).toEqual([
      '[{"a":1}]',
      JSON.stringify([big]),
      '[{"b":2}]',
    ]);
  });

  it('gives no array for no records, so no statement is sent', () => {
    expect(jsonArrays([])).toEqual([]);
  });
});
