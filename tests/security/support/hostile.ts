import fc from 'fast-check';

/** Values an attacker tries first: escapes, NUL, traversal, injection, huge, not-a-UUID, odd Unicode. */
export const classics = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\u0007\u001b[31m',
  '\r\n',
  '%',
  '%E0%A4%A',
  '%00',
  '%2e%2e%2f',
  '../../../../etc/passwd',
  "' OR 1=1 --",
  '"; DROP TABLE events; --',
  '<script>alert(1)</script>',
  '<img src=x onerror=alert(1)>',
  'javascript:alert(1)',
  '//evil.example',
  '/.//evil.example/x',
  '\\\\evil.example',
  'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz',
  '------------------------------------',
  '00000000-0000-0000-0000-000000000000',
  '__proto__',
  'constructor',
  'toString',
  '\uD800',
  '\uFEFF',
  '𝕏🙂',
  'x'.repeat(300),
  'y'.repeat(5_000),
  '9'.repeat(400),
  '-1',
  '1e309',
  'NaN',
  '[object Object]',
];

/** Any string: classics, arbitrary Unicode (lone surrogates included), control characters, long runs. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...classics) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  {
    weight: 2,
    arbitrary: fc.string({
      unit: fc.integer({ min: 0, max: 0x9f }).map((c) => String.fromCharCode(c)),
      maxLength: 20,
    }),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 200 }) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom(...classics), fc.string({ maxLength: 10 })).map(([a, b]) => a + b),
  },
);

/** Something a person could type into a form, with a hostile character or two inside now and then. */
export const almostValid = (base: string): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 12 }).map((s) => `${base} ${s}`) },
    { weight: 1, arbitrary: hostileString.map((s) => `${base} ${s}`) },
    { weight: 1, arbitrary: hostileString },
  );

/** Printable header text (what an HTTP client can send at all), with classics that fit. */
export const headerString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...classics.filter((c) => /^[\x20-\x7e]*$/.test(c) && c.length < 1000)),
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 }),
  fc.string({ unit: 'binary', maxLength: 30 }).map(encode),
);

/** encodeURIComponent that does not throw on lone surrogates (it would be the test crashing, not the app). */
export function encode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return encodeURIComponent(value.replace(/[\uD800-\uDFFF]/g, '\uFFFD'));
  }
}

/** A path segment: encoded hostile text, or a raw classic with its percent signs as they are. */
export const pathSegment: fc.Arbitrary<string> = fc.oneof(
  hostileString.filter((s) => s.length > 0).map(encode),
  fc.constantFrom(
    '%E0%A4%A',
    '%',
    '%00',
    '..',
    '%2e%2e',
    'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz',
    '-'.repeat(36),
  ),
);

/** Figures per attack class, printed at the end of each suite. */
export interface Tally {
  tried: number;
  fiveHundreds: number;
  accepted: number;
  stored: number;
  samples: string[];
}

export function createFigures() {
  const classes = new Map<string, Tally>();
  const of = (name: string): Tally => {
    let tally = classes.get(name);
    if (!tally)
      classes.set(name, (tally = { tried: 0, fiveHundreds: 0, accepted: 0, stored: 0, samples: [] }));
    return tally;
  };
  return {
    of,
    /** Counts one try; a status ≥ 500 is remembered with what caused it. */
    record(name: string, status: number, what: string) {
      const tally = of(name);
      tally.tried++;
      if (status >= 500) {
        tally.fiveHundreds++;
        if (tally.samples.length < 5) tally.samples.push(`${status} ${what.slice(0, 200)}`);
      }
    },
    all: () => [...classes],
    print(backend: string) {
      for (const [name, t] of classes) {
        console.log(
          `SECURITY ${backend} class=${name} tried=${t.tried} 5xx=${t.fiveHundreds} accepted=${t.accepted} ` +
            `stored=${t.stored} lost=${t.accepted - t.stored}`,
        );
      }
    },
  };
}
