import { TIME_ZONE_COOKIE } from '../components/time-zone.ts';

/**
 * Tells the server this browser's time zone, so the pages it renders write times on the viewer's clock
 * and read an "as of" typed on it (web/components/time-zone.ts). Set only when it changed: a traveller's
 * next page follows the new zone; every page names the zone it writes in, so the one before is not wrong.
 */
export function rememberTimeZone(): void {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (!zone) return;
  const value = encodeURIComponent(zone);
  if (document.cookie.split('; ').includes(`${TIME_ZONE_COOKIE}=${value}`)) return;
  const secure = location.protocol === 'https:' ? '; Secure' : '';
  document.cookie = `${TIME_ZONE_COOKIE}=${value}; Path=/; Max-Age=31536000; SameSite=Lax${secure}`;
}
