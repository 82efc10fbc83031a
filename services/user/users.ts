import type { UserEvent } from '#events/user/events.ts';
import type { UserCommand } from '#events/user/commands.ts';
import type { Role } from '#events/user/fields.ts';
import { can, type Action } from '#events/user/permissions.ts';
import { assertNever } from '#infra/assert-never.ts';
import { accept, reject, type Decider, type Decision, type Rejection } from '../decider.ts';

export interface UserState {
  email: string;
  role: Role;
  disabled: boolean;
}

export interface UsersState {
  byId: Map<string, UserState>;
  idByEmail: Map<string, string>;
}

const activeAdmins = (state: UsersState, except: string) =>
  [...state.byId.entries()].filter(([id, u]) => id !== except && u.role === 'admin' && !u.disabled).length;

const LAST_ADMIN = 'Rivals needs at least one active admin: make someone else an admin first.';

/**
 * Pure: whether the account that sent a command may still make it when it is decided. The web checked
 * the role when the request came in, but a command can be decided later (in flight, re-sent from the
 * inbox, retried from the dead letters): a disable or a role change answered before that must hold.
 * Actors that are not accounts (the system, operator commands) are not users and pass.
 */
export function actorMayDecide(state: UsersState, actorId: string, action: Action): Rejection | undefined {
  const user = state.byId.get(actorId);
  if (!user) return undefined;
  if (user.disabled) return reject('forbidden', 'Your account was disabled, so this change was not saved.');
  if (!can(user.role, action))
    return reject('forbidden', `Your role is now ${user.role}, so this change was not saved.`);
  return undefined;
}

export const usersDecider: Decider<UserCommand, UserEvent, UsersState> = {
  initialState: () => ({ byId: new Map(), idByEmail: new Map() }),

  evolve(state, event) {
    const byId = new Map(state.byId);
    const idByEmail = new Map(state.idByEmail);
    const { userId } = event.data;
    const current = byId.get(userId);
    switch (event.type) {
      case 'UserAdded':
        byId.set(userId, { email: event.data.email, role: event.data.role, disabled: false });
        idByEmail.set(event.data.email, userId);
        break;
      case 'UserRoleChanged':
        if (current) byId.set(userId, { ...current, role: event.data.role });
        break;
      case 'UserDisabled':
        if (current) byId.set(userId, { ...current, disabled: true });
        break;
      case 'UserEnabled':
        if (current) byId.set(userId, { ...current, disabled: false });
        break;
      case 'UserPasswordReset':
      case 'UserPasswordChanged':
        return state;
      default:
        return assertNever(event);
    }
    return { byId, idByEmail };
  },

  decide(command, state): Decision<UserEvent> {
    const { userId } = command.payload;
    const user = state.byId.get(userId);
    switch (command.type) {
      case 'AddUser': {
        const { email, displayName, role } = command.payload;
        if (user) return reject('conflict', 'This user already exists.');
        if (state.idByEmail.has(email)) {
          const message = 'A user with this email already exists.';
          return reject('conflict', message, { fields: { email: message } });
        }
        return accept({ type: 'UserAdded', data: { userId, email, displayName, role } });
      }
      case 'ChangeUserRole': {
        if (!user) return reject('not_found', 'This user does not exist.');
        const { role } = command.payload;
        if (user.role === role) return accept();
        if (user.role === 'admin' && !user.disabled && activeAdmins(state, userId) === 0) {
          return reject('conflict', LAST_ADMIN);
        }
        return accept({ type: 'UserRoleChanged', data: { userId, role, previousRole: user.role } });
      }
      case 'DisableUser':
        if (!user) return reject('not_found', 'This user does not exist.');
        if (user.disabled) return accept();
        if (user.role === 'admin' && activeAdmins(state, userId) === 0) return reject('conflict', LAST_ADMIN);
        return accept({ type: 'UserDisabled', data: { userId } });
      case 'EnableUser':
        if (!user) return reject('not_found', 'This user does not exist.');
        if (!user.disabled) return accept();
        return accept({ type: 'UserEnabled', data: { userId } });
      case 'ResetPassword':
        // Recorded each time (the audit lists every reset); the password itself is stored by the caller.
        if (!user) return reject('not_found', 'This user does not exist.');
        return accept({ type: 'UserPasswordReset', data: { userId } });
      case 'ChangeOwnPassword':
        if (!user) return reject('not_found', 'This user does not exist.');
        // The route sends the signed-in user's own id; anything else is not this page's request.
        if (command.senderId !== userId) return reject('forbidden', 'You can only change your own password.');
        return accept({ type: 'UserPasswordChanged', data: { userId } });
      default:
        return assertNever(command);
    }
  },
};
