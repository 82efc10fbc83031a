import type { Role } from '#events/user/fields.ts';

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
}
