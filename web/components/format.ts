/** Formatting shared by every page (server-rendered and in the browser): one place, one look. */

const dateTime = new Intl.DateTimeFormat('en-GB', {
  dateStyle: 'medium',
  timeStyle: 'short',
  timeZone: 'UTC',
});

/** en-GB's medium month names as Node's ICU writes them ("Sept", not "Sep"). */
const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sept', 'Oct', 'Nov', 'Dec'];

const twoDigits = (n: number): string => (n < 10 ? `0${n}` : String(n));

/**
 * A moment as people read it on every page: "22 Nov 2026, 19:30 UTC". Written out by hand: the same
 * text as en-GB's `Intl.DateTimeFormat` (a property test holds them equal) at a tenth of its cost —
 * every table row shows one — and the same in every browser, whatever its ICU says. Years outside
 * 1–9999 and invalid moments go to Intl (which throws for the latter, as before).
 */
export function formatTime(iso: string): string {
  const at = new Date(iso);
  const year = at.getUTCFullYear();
  if (!(year >= 1 && year <= 9999)) return `${dateTime.format(at)} UTC`;
  const date = `${at.getUTCDate()} ${months[at.getUTCMonth()]} ${year}`;
  return `${date}, ${twoDigits(at.getUTCHours())}:${twoDigits(at.getUTCMinutes())} UTC`;
}

/** A count or position with thousands separators: "1,000,000". */
export const formatNumber = (value: number): string => value.toLocaleString('en-US');
