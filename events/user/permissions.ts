import type { Role } from './fields.ts';

/**
 * The one table of who may do what. Every route, component event and method names one action; the
 * server checks it on every request, and the command router again when a command is decided (its
 * sender may have been disabled or demoted since). The UI hides what a role cannot do, but these are
 * the guards.
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
  /** No page adds segments yet: start-up adds the defaults (as the system, not a user). */
  'segments.manage': 'admin',
  'audit.view': 'editor',
  'users.view': 'admin',
  'users.manage': 'admin',
  'ops.view': 'admin',
  'ops.manage': 'admin',
  /** Your own account (/account): every signed-in user may set their own password. */
  'account.manage': 'viewer',
} as const satisfies Record<string, Role>;

export type Action = keyof typeof permissions;

const rank: Record<Role, number> = { viewer: 1, editor: 2, admin: 3 };

export function can(role: Role | undefined, action: Action): boolean {
  return role !== undefined && rank[role] >= rank[permissions[action]];
}
