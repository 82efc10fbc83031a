import { isUtf8 } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { firstNotUtf8 } from '#web/middleware/body-limits.server.ts';
import { escapesAreUtf8 } from '#web/middleware/utf8-query.server.ts';

const bytes = (...values: number[]) => Uint8Array.from(values);

describe('firstNotUtf8 (where a refused body stops being UTF-8)', () => {
  it('names the first byte that does not start or continue a character', () => {
    expect(firstNotUtf8(Buffer.from('Café 😀 東京 \uFFFD'))).toBe(-1);
    expect(firstNotUtf8(Buffer.concat([Buffer.from('Caf'), bytes(0xe9)]))).toBe(3);
    expect(firstNotUtf8(bytes(0x61, 0xc3))).toBe(1); // cut short
    expect(firstNotUtf8(bytes(0xc0, 0x80))).toBe(0); // overlong
    expect(firstNotUtf8(bytes(0xe0, 0x80, 0x80))).toBe(0); // overlong
    expect(firstNotUtf8(bytes(0xed, 0xa0, 0x80))).toBe(0); // a surrogate
    expect(firstNotUtf8(bytes(0xf4, 0x90, 0x80, 0x80))).toBe(0); // past U+10FFFF
    expect(firstNotUtf8(bytes(0xf0, 0x9f, 0x98, 0x80, 0xff))).toBe(4);
  });

  it('agrees with Node on which byte strings are UTF-8 (10,000 random ones, biased to the edges)', () => {
    const edges = [
      0x00, 0x7f, 0x80, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xa0, 0xed, 0x9f, 0xef, 0xf0, 0x90, 0xf4, 0x8f, 0xf5,
      0xff,
    ];
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let n = 0; n < 10_000; n++) {
      const sample = Uint8Array.from({ length: 1 + Math.floor(random() * 6) }, () =>
        random() < 0.7 ? (edges[Math.floor(random() * edges.length)] ?? 0) : Math.floor(random() * 256),
      );
      expect(firstNotUtf8(sample) === -1, Buffer.from(sample).toString('hex')).toBe(isUtf8(sample));
    }
  });
});

describe('escapesAreUtf8 (a query string)', () => {
  it('takes UTF-8 escapes, plain text and a typed %; refuses escapes of other bytes', () => {
    for (const ok of [
      '',
      'search=abc',
      'search=%C3%A9',
      'a=%F0%9F%98%80&b=%E6%9D%B1',
      'search=50%',
      'x=%2',
      'x=%25E9',
    ])
      expect(escapesAreUtf8(ok), ok).toBe(true);
    for (const bad of [
      'search=%E9',
      'search=%C3',
      'search=%C3a%A9',
      'a=1&b=%FF',
      'search=%C0%80',
      'x=%ED%A0%80',
    ])
      expect(escapesAreUtf8(bad), bad).toBe(false);
  });
});
