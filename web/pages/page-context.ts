import type { Role } from '#events/user/fields.ts';
import type { LiveMarks } from '../realtime/live-marks.ts';

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  role: Role;
}

export interface Flash {
  kind: 'success' | 'error' | 'info';
  text: string;
}

/** What every page's layout needs from the request. */
export interface PageContext {
  nonce: string;
  csrfToken: string;
  user: SessionUser | undefined;
  path: string;
  flash: Flash[];
  assets: { css: string; js: string };
  /** The viewer's IANA time zone (its browser's, from a cookie; UTC until it has said): times are written in it. */
  timeZone: string;
  /** How far the read models were when this full page was rendered (signed in only); its live updates start there. */
  live?: LiveMarks;
}
