/** Formatting shared by every page (server-rendered and in the browser): one place, one look. */

const dateTime = new Intl.DateTimeFormat('en-GB', {
  dateStyle: 'medium',
  timeStyle: 'short',
  timeZone: 'UTC',
});

/** A moment as people read it on every page: "22 Nov 2026, 19:30 UTC". */
export const formatTime = (iso: string): string => `${dateTime.format(new Date(iso))} UTC`;

/** A count or position with thousands separators: "1,000,000". */
export const formatNumber = (value: number): string => value.toLocaleString('en-US');
