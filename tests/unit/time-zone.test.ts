import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatTime, zonedTimeParts, zonedTimePartsToSecond } from '#web/components/format.ts';
import {
  instantOfWallTime,
  isUtc,
  knownTimeZone,
  timeZoneOfCookie,
  wallTimeOf,
  zoneLabel,
} from '#web/components/time-zone.ts';
import { momentOf } from '#web/pages/history/history.routes.server.tsx';

const wall = (reading: string) => new Date(`${reading}Z`);
const instant = (reading: string, zone: string) => instantOfWallTime(wall(reading), zone).toISOString();

describe('a wall-clock reading in a time zone', () => {
  it('is the moment it names there', () => {
    expect(instant('2026-11-26T13:10:00', 'Asia/Tokyo')).toBe('2026-11-26T04:10:00.000Z');
    expect(instant('2026-11-26T09:40:00', 'Asia/Kolkata')).toBe('2026-11-26T04:10:00.000Z');
    expect(instant('2026-07-01T12:00:00', 'America/Los_Angeles')).toBe('2026-07-01T19:00:00.000Z');
    expect(instant('2026-01-01T12:00:00', 'America/Los_Angeles')).toBe('2026-01-01T20:00:00.000Z');
    expect(instant('2026-01-01T12:00:00', 'UTC')).toBe('2026-01-01T12:00:00.000Z');
  });

  it('in the hour the clocks skip, lands as far after the gap (New York, 8 March 2026)', () => {
    expect(instant('2026-03-08T01:59:59', 'America/New_York')).toBe('2026-03-08T06:59:59.000Z');
    expect(instant('2026-03-08T02:30:00', 'America/New_York')).toBe('2026-03-08T07:30:00.000Z'); // 03:30 EDT
    expect(instant('2026-03-08T03:00:00', 'America/New_York')).toBe('2026-03-08T07:00:00.000Z');
  });

  it('in the hour the clocks repeat, is the first of the two (New York, 1 November 2026)', () => {
    expect(instant('2026-11-01T01:30:00', 'America/New_York')).toBe('2026-11-01T05:30:00.000Z'); // EDT
    expect(instant('2026-11-01T02:00:00', 'America/New_York')).toBe('2026-11-01T07:00:00.000Z'); // EST
    expect(instant('2026-10-25T02:30:00', 'Europe/Berlin')).toBe('2026-10-25T00:30:00.000Z'); // CEST
  });

  it('reads back as the same reading for any moment that is not in a repeated hour', () => {
    const zones = fc.constantFrom(
      'Asia/Tokyo',
      'America/New_York',
      'Europe/Berlin',
      'Australia/Lord_Howe',
      'Asia/Kathmandu',
    );
    const moments = fc.integer({ min: Date.UTC(1990, 0, 1) / 1000, max: Date.UTC(2040, 0, 1) / 1000 });
    fc.assert(
      fc.property(zones, moments, (zone, seconds) => {
        const at = new Date(seconds * 1000);
        const parts = new Intl.DateTimeFormat('sv-SE', {
          timeZone: zone,
          dateStyle: 'short',
          timeStyle: 'medium',
        }).format(at);
        const back = instantOfWallTime(wall(parts.replace(' ', 'T')), zone);
        // The reading names `at`, or (where the clocks went back) the same reading one offset earlier.
        expect(back.getTime() === at.getTime() || back.getTime() < at.getTime()).toBe(true);
        expect(at.getTime() - back.getTime()).toBeLessThanOrEqual(60 * 60 * 1000);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('the "as of" field', () => {
  it('is read on the clock its label names, through the second it names', () => {
    expect(momentOf('2026-11-26T13:10:05', 'Asia/Tokyo')).toEqual({
      at: new Date('2026-11-26T04:10:05.999Z'),
    });
    expect(momentOf('2026-11-26T13:10:05')).toEqual({ at: new Date('2026-11-26T13:10:05.999Z') });
  });

  it('reads a time without seconds as :00, as the field shows it and a browser sends "…:00"', () => {
    expect(momentOf('2026-11-26T13:10', 'Asia/Tokyo')).toEqual({ at: new Date('2026-11-26T04:10:00.999Z') });
    expect(momentOf('2026-11-26T13:10')).toEqual(momentOf('2026-11-26T13:10:00'));
  });

  it('has every change the history writes at that second, and none written at the next', () => {
    // The history writes a change accepted at 13:10:05.400 as "13:10:05": the card as of 13:10:05 has it.
    const listedAt = new Date('2026-11-26T13:10:05.400Z');
    const shown = formatTime(listedAt.toISOString(), 'UTC', 'second');
    expect(shown).toBe('26 Nov 2026, 13:10:05 UTC');
    const at = (input: string) => (momentOf(input) as { at: Date }).at.getTime();
    expect(listedAt.getTime()).toBeLessThanOrEqual(at('2026-11-26T13:10:05'));
    expect(listedAt.getTime()).toBeGreaterThan(at('2026-11-26T13:10:04'));
    expect(new Date('2026-11-26T13:10:06.000Z').getTime()).toBeGreaterThan(at('2026-11-26T13:10:05'));
  });

  it('names the zone in what to type instead of a date that does not exist', () => {
    expect(momentOf('2026-02-30T10:00', 'Asia/Tokyo')).toEqual({
      error:
        '“2026-02-30T10:00” is not a date and time. Use the form YYYY-MM-DDTHH:MM:SS (Asia/Tokyo; the seconds may be left out), for example 2024-02-28T14:30:05.',
    });
    expect(momentOf('yesterday')).toHaveProperty('error', expect.stringContaining('(UTC;'));
  });
});

describe('a link "as of this change"', () => {
  it('carries the change’s second on the viewer’s clock, as the row writes it', () => {
    expect(wallTimeOf(new Date('2026-11-26T04:10:05.400Z'), 'Asia/Tokyo')).toBe('2026-11-26T13:10:05');
    expect(wallTimeOf(new Date('2026-11-26T04:10:05.999Z'), 'UTC')).toBe('2026-11-26T04:10:05');
  });

  it('is read back, in any zone, through the change’s own second (in an hour the clocks repeat: an earlier one)', () => {
    const zones = Intl.supportedValuesOf('timeZone');
    const moments = fc.date({
      min: new Date('1900-01-01T00:00:00Z'),
      max: new Date('2100-12-31T23:59:59Z'),
      noInvalidDate: true,
    });
    fc.assert(
      fc.property(fc.constantFrom(...zones), moments, (zone, changedAt) => {
        const read = momentOf(wallTimeOf(changedAt, zone), zone) as { at: Date };
        const second = Math.floor(changedAt.getTime() / 1000) * 1000;
        // Exactly its second, except in an hour the clocks repeat, whose reading names the first pass
        // (the page then links in UTC: history.page.tsx).
        if (read.at.getTime() !== second + 999) expect(read.at.getTime()).toBeLessThan(second);
        const inUtc = momentOf(wallTimeOf(changedAt, 'UTC'), 'UTC') as { at: Date };
        expect(inUtc.at.getTime()).toBe(second + 999);
      }),
      { numRuns: 5_000 },
    );
  });
});

describe('the viewer’s zone', () => {
  it('is a name this runtime knows, else UTC', () => {
    expect(timeZoneOfCookie('Asia%2FTokyo')).toBe('Asia/Tokyo');
    expect(timeZoneOfCookie('asia%2Ftokyo')).toBe('Asia/Tokyo');
    expect(timeZoneOfCookie(undefined)).toBe('UTC');
    expect(timeZoneOfCookie('Mars%2FOlympus')).toBe('UTC');
    expect(timeZoneOfCookie('%E0%A4%A')).toBe('UTC');
    expect(timeZoneOfCookie('<script>')).toBe('UTC');
    expect(knownTimeZone('x'.repeat(200))).toBeUndefined();
    expect(zoneLabel('Etc/UTC')).toBe('UTC');
    expect(zoneLabel('Europe/Berlin')).toBe('Europe/Berlin');
  });

  it.each([
    { precision: 'minute', written: 'hh:mm', options: zonedTimeParts, numRuns: 20_000 },
    { precision: 'second', written: 'hh:mm:ss', options: zonedTimePartsToSecond, numRuns: 10_000 },
  ] as const)(
    'writes "day month year, $written zone" in every zone the runtime knows, for any moment in years 1–9999',
    ({ precision, options, numRuns }) => {
      const zones = Intl.supportedValuesOf('timeZone');
      const parts = new Map(
        zones.map((zone) => [zone, new Intl.DateTimeFormat('en-GB', { ...options, timeZone: zone })]),
      );
      const moments = fc.date({
        min: new Date('0001-01-01T00:00:00Z'),
        max: new Date('9999-12-31T23:59:59Z'),
        noInvalidDate: true,
      });
      fc.assert(
        fc.property(fc.constantFrom(...zones), moments, (zone, at) => {
          const of = (parts.get(zone) as Intl.DateTimeFormat).formatToParts(at);
          const part = (type: Intl.DateTimeFormatPartTypes) => of.find((p) => p.type === type)?.value ?? '';
          const seconds = precision === 'second' ? `:${part('second')}` : '';
          const expected = isUtc(zone)
            ? formatTime(at.toISOString(), 'UTC', precision)
            : `${part('day')} ${part('month')} ${part('year')}, ${part('hour')}:${part('minute')}${seconds} ${part('timeZoneName')}`;
          expect(formatTime(at.toISOString(), zone, precision)).toBe(expected);
        }),
        { numRuns },
      );
    },
  );

  it('writes the second a moment falls in, not the nearest one', () => {
    expect(formatTime('2026-11-26T04:10:30.999Z', 'Asia/Tokyo', 'second')).toBe(
      '26 Nov 2026, 13:10:30 GMT+9',
    );
  });

  it('is the clock times are written on, with its short name', () => {
    expect(formatTime('2026-11-26T04:10:30Z', 'Asia/Tokyo')).toBe('26 Nov 2026, 13:10 GMT+9');
    expect(formatTime('2026-11-26T04:10:30Z', 'America/Los_Angeles')).toBe('25 Nov 2026, 20:10 GMT-8');
    expect(formatTime('2026-07-01T04:10:30Z', 'America/Los_Angeles')).toBe('30 Jun 2026, 21:10 GMT-7');
    expect(formatTime('2026-09-05T03:07:00Z', 'Asia/Kolkata')).toBe('5 Sept 2026, 08:37 GMT+5:30');
    expect(formatTime('2026-11-26T04:10:30Z', 'Etc/UTC')).toBe('26 Nov 2026, 04:10 UTC');
    expect(formatTime('2026-11-26T04:10:30Z')).toBe('26 Nov 2026, 04:10 UTC');
  });
});
