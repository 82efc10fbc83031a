import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatTime } from '#web/components/format.ts';

const intl = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
const intlToSecond = new Intl.DateTimeFormat('en-GB', {
  dateStyle: 'medium',
  timeStyle: 'medium',
  timeZone: 'UTC',
});

describe('formatTime', () => {
  it('writes the same text as en-GB Intl for any moment in years 1–9999', () => {
    const moments = fc.date({
      min: new Date('0001-01-01T00:00:00Z'),
      max: new Date('9999-12-31T23:59:59Z'),
      noInvalidDate: true,
    });
    fc.assert(
      fc.property(moments, (at) => {
        expect(formatTime(at.toISOString())).toBe(`${intl.format(at)} UTC`);
        expect(formatTime(at.toISOString(), 'UTC', 'second')).toBe(`${intlToSecond.format(at)} UTC`);
      }),
      { numRuns: 5_000 },
    );
  });

  it('reads as people expect, September included', () => {
    expect(formatTime('2026-11-22T19:30:59.999Z')).toBe('22 Nov 2026, 19:30 UTC');
    expect(formatTime('2026-09-05T03:07:00Z')).toBe('5 Sept 2026, 03:07 UTC');
    expect(formatTime('0999-01-01T00:00:00Z')).toBe('1 Jan 999, 00:00 UTC');
    // To the second, where moments are compared (the history): the seconds are cut, never rounded.
    expect(formatTime('2026-11-22T19:30:59.999Z', 'UTC', 'second')).toBe('22 Nov 2026, 19:30:59 UTC');
    expect(formatTime('2026-09-05T03:07:00Z', 'UTC', 'second')).toBe('5 Sept 2026, 03:07:00 UTC');
  });

  it('refuses an invalid moment as Intl does', () => {
    expect(() => formatTime('not a time')).toThrow(RangeError);
  });
});
