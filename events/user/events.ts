import { z } from 'zod';
import { defineEvent } from '../registry.ts';
import { roles } from './fields.ts';

// Password hashes never enter events: they live in the user_credentials table only.
export const UserAdded = defineEvent({
  type: 'UserAdded',
  schemaVersion: 1,
  schema: z.object({ userId: z.uuid(), email: z.string(), displayName: z.string(), role: z.enum(roles) }),
});
export const UserRoleChanged = defineEvent({
  type: 'UserRoleChanged',
  schemaVersion: 1,
  schema: z.object({ userId: z.uuid(), role: z.enum(roles), previousRole: z.enum(roles) }),
});
export const UserDisabled = defineEvent({
  type: 'UserDisabled',
  schemaVersion: 1,
  schema: z.object({ userId: z.uuid() }),
});
export const UserEnabled = defineEvent({
  type: 'UserEnabled',
  schemaVersion: 1,
  schema: z.object({ userId: z.uuid() }),
});

// The operator set a new password (`users:set-password`); the hash itself is in user_credentials only.
export const UserPasswordReset = defineEvent({
  type: 'UserPasswordReset',
  schemaVersion: 1,
  schema: z.object({ userId: z.uuid() }),
});

// The user set a new password themselves (/account), giving the current one; the hash is in user_credentials.
export const UserPasswordChanged = defineEvent({
  type: 'UserPasswordChanged',
  schemaVersion: 1,
  schema: z.object({ userId: z.uuid() }),
});

export type UserEvent =
  | { type: 'UserAdded'; data: z.infer<typeof UserAdded.schema> }
  | { type: 'UserRoleChanged'; data: z.infer<typeof UserRoleChanged.schema> }
  | { type: 'UserDisabled'; data: z.infer<typeof UserDisabled.schema> }
  | { type: 'UserEnabled'; data: z.infer<typeof UserEnabled.schema> }
  | { type: 'UserPasswordReset'; data: z.infer<typeof UserPasswordReset.schema> }
  | { type: 'UserPasswordChanged'; data: z.infer<typeof UserPasswordChanged.schema> };

export const userEventDefinitions = [
  UserAdded,
  UserRoleChanged,
  UserDisabled,
  UserEnabled,
  UserPasswordReset,
  UserPasswordChanged,
];
