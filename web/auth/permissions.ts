import type { Role } from '#events/user/fields.ts';

/**
 * The one table of who may do what. Every route, component event and method names one action;
 * the server checks it on every request. The UI hides what a role cannot do, but this is the guard.
 */
export const permissions = {
  'competitors.view': 'viewer',
  'competitors.create': 'editor',
  'competitors.edit': 'editor',
  'competitors.delete': 'admin',
  'notes.edit': 'editor',
  'history.view': 'editor',
  'battlecard.print': 'viewer',
  'ranking.view': 'viewer',
  'ranking.reorder': 'editor',
  'segments.view': 'viewer',
  'segments.reorder': 'editor',
  'audit.view': 'editor',
  'users.view': 'admin',
  'users.manage': 'admin',
  'ops.view': 'admin',
  'ops.manage': 'admin',
} as const satisfies Record<string, Role>;

export type Action = keyof typeof permissions;

const rank: Record<Role, number> = { viewer: 1, editor: 2, admin: 3 };

export function can(role: Role | undefined, action: Action): boolean {
  return role !== undefined && rank[role] >= rank[permissions[action]];
}
