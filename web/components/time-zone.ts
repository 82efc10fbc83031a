/**
 * The viewer's time zone: pages write every moment on the viewer's own clock (the browser names its zone
 * in the `rivals_tz` cookie, web/client/time-zone-cookie.ts), and an "as of" typed on that clock means
 * that moment there. UTC until the browser has said, and for any name this runtime does not know.
 */

export const UTC = 'UTC';

/** The cookie the browser keeps its IANA zone name in (not a secret: read only to write times). */
export const TIME_ZONE_COOKIE = 'rivals_tz';

/** Names of UTC itself: shown as "UTC", and written by the fast path of formatTime. */
const utcNames = new Set([
  'UTC',
  'Etc/UTC',
  'Etc/UCT',
  'UCT',
  'Etc/GMT',
  'GMT',
  'Etc/Universal',
  'Universal',
  'Etc/Zulu',
  'Zulu',
  'Etc/GMT0',
  'GMT0',
  'Etc/GMT+0',
  'Etc/GMT-0',
  'Etc/Greenwich',
  'Greenwich',
]);

export const isUtc = (zone: string): boolean => utcNames.has(zone);

/**
 * Canonical names already checked. Every page asks (the viewer's cookie), and checking a name by making
 * a formatter costs ~60 µs; only names equal to their canonical form are kept, so the set stays within
 * the runtime's few hundred zones whatever the cookies say.
 */
const canonical = new Set<string>();

/** The zone's canonical name when `name` is one this runtime knows (IANA, any case), else undefined. */
export function knownTimeZone(name: string | undefined): string | undefined {
  if (!name || name.length > 64 || !/^[A-Za-z0-9_+\-/]+$/.test(name)) return undefined;
  if (canonical.has(name)) return name;
  try {
    const zone = new Intl.DateTimeFormat('en-GB', { timeZone: name }).resolvedOptions().timeZone;
    if (zone === name) canonical.add(zone);
    return zone;
  } catch {
    return undefined;
  }
}

/** The zone a `rivals_tz` cookie names (URI-encoded by the browser), or UTC. */
export function timeZoneOfCookie(raw: string | undefined): string {
  try {
    return knownTimeZone(raw === undefined ? undefined : decodeURIComponent(raw)) ?? UTC;
  } catch {
    return UTC;
  }
}

/** How a form labels the zone: "UTC", or the IANA name ("Asia/Tokyo"). */
export const zoneLabel = (zone: string): string => (isUtc(zone) ? 'UTC' : zone);

/** One formatter per zone, made when first asked for (making one costs far more than using it). */
export function perZone(options: Intl.DateTimeFormatOptions): (zone: string) => Intl.DateTimeFormat {
  const made = new Map<string, Intl.DateTimeFormat>();
  return (zone) => {
    let format = made.get(zone);
    if (!format) made.set(zone, (format = new Intl.DateTimeFormat('en-GB', { ...options, timeZone: zone })));
    return format;
  };
}

const wallFormat = perZone({
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: 'numeric',
  minute: 'numeric',
  second: 'numeric',
  hourCycle: 'h23',
  era: 'short',
});

/** The wall clock in `zone` at `ms`, as if that clock's reading were UTC (milliseconds, whole seconds). */
function wallAsUtc(ms: number, zone: string): number {
  const parts = wallFormat(zone).formatToParts(new Date(ms));
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const bc = parts.find((p) => p.type === 'era')?.value.startsWith('B') ?? false;
  const at = new Date(0);
  at.setUTCFullYear(bc ? 1 - n('year') : n('year'), n('month') - 1, n('day'));
  at.setUTCHours(n('hour'), n('minute'), n('second'), 0);
  return at.getTime();
}

/** How far `zone`'s clock is ahead of UTC at `ms` (milliseconds). */
const offsetAt = (ms: number, zone: string): number => wallAsUtc(ms, zone) - Math.floor(ms / 1000) * 1000;

const DAY = 24 * 60 * 60 * 1000;

/**
 * The moment a wall-clock reading (whole seconds, given as if it were UTC: `wall`) names in `zone`. Where the clocks go
 * back and a reading happens twice, the earlier; where they go forward and a reading never happens, it
 * is read with the offset before the change, which lands as far after the gap as it was into it (02:30 on
 * the night New York skips 02:00–03:00 is 03:30 EDT). Both as RFC 5545 and Temporal's "compatible" do.
 */
export function instantOfWallTime(wall: Date, zone: string): Date {
  const reading = wall.getTime();
  if (isUtc(zone)) return new Date(reading);
  const before = offsetAt(reading - DAY, zone);
  const after = offsetAt(reading + DAY, zone);
  const fits = [reading - before, reading - after].filter((t) => wallAsUtc(t, zone) === reading);
  if (fits.length > 0) return new Date(Math.min(...fits));
  return new Date(reading - before);
}

/**
 * What a datetime-local field holds for `at` on the clock of `zone`, to the second (the milliseconds
 * dropped): "2026-11-26T13:10:05". The history's links "as of this change" carry it. Years 1–9999 only.
 */
export const wallTimeOf = (at: Date, zone: string): string =>
  new Date(wallAsUtc(at.getTime(), zone)).toISOString().slice(0, 19);
