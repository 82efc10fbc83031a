/** Formatting shared by every page (server-rendered and in the browser): one place, one look. */
import { isUtc, perZone } from './time-zone.ts';

const dateTime = new Intl.DateTimeFormat('en-GB', {
  dateStyle: 'medium',
  timeStyle: 'short',
  timeZone: 'UTC',
});
const dateTimeToSecond = new Intl.DateTimeFormat('en-GB', {
  dateStyle: 'medium',
  timeStyle: 'medium',
  timeZone: 'UTC',
});

/** en-GB's medium month names as Node's ICU writes them ("Sept", not "Sep"). */
const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sept', 'Oct', 'Nov', 'Dec'];

const twoDigits = (n: number): string => (n < 10 ? `0${n}` : String(n));

/** The parts a time outside UTC is written with (en-GB): "26 Nov 2026, 13:10 GMT+9". */
export const zonedTimeParts: Intl.DateTimeFormatOptions = {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
  timeZoneName: 'short',
};

/** The same, to the second: "26 Nov 2026, 13:10:05 GMT+9". */
export const zonedTimePartsToSecond: Intl.DateTimeFormatOptions = { ...zonedTimeParts, second: '2-digit' };

const zonedFormat = perZone(zonedTimeParts);
const zonedFormatToSecond = perZone(zonedTimePartsToSecond);

/**
 * How finely a time is written: to the minute (default: tables, audit, "last updated"), or to the second
 * where a moment is compared with others, as on the history page, whose "as of" is read to the second
 * (docs/decisions/0025-as-of-to-the-second.md).
 */
export type TimePrecision = 'minute' | 'second';

/**
 * A moment on the viewer's clock (`timeZone`, an IANA name the caller has checked; default UTC), in the
 * same words as in UTC and with the zone's short name: "22 Nov 2026, 04:30 GMT+9", "21 Nov 2026, 11:30 GMT-8".
 */
export function formatTime(iso: string, timeZone = 'UTC', precision: TimePrecision = 'minute'): string {
  if (isUtc(timeZone)) return formatUtc(iso, precision);
  // en-GB writes these parts as "d MMM y, HH:mm z" (or "HH:mm:ss"; a property test holds it for every zone
  // the runtime knows): `format` at about a quarter of the cost of assembling `formatToParts`.
  return (precision === 'second' ? zonedFormatToSecond : zonedFormat)(timeZone).format(new Date(iso));
}

/**
 * A moment as people read it in UTC: "22 Nov 2026, 19:30 UTC". Written out by hand: the same
 * text as en-GB's `Intl.DateTimeFormat` (a property test holds them equal) at a tenth of its cost —
 * every table row shows one — and the same in every browser, whatever its ICU says. Years outside
 * 1–9999 and invalid moments go to Intl (which throws for the latter, as before).
 */
function formatUtc(iso: string, precision: TimePrecision): string {
  const at = new Date(iso);
  const year = at.getUTCFullYear();
  if (!(year >= 1 && year <= 9999))
    return `${(precision === 'second' ? dateTimeToSecond : dateTime).format(at)} UTC`;
  const date = `${at.getUTCDate()} ${months[at.getUTCMonth()]} ${year}`;
  const seconds = precision === 'second' ? `:${twoDigits(at.getUTCSeconds())}` : '';
  return `${date}, ${twoDigits(at.getUTCHours())}:${twoDigits(at.getUTCMinutes())}${seconds} UTC`;
}

/** A count or position with thousands separators: "1,000,000". */
export const formatNumber = (value: number): string => value.toLocaleString('en-US');
