import { z } from 'zod';
import { displayName, email, role } from './fields.ts';

export const AddUser = z.object({
  type: z.literal('AddUser'),
  payload: z.object({ userId: z.uuid(), email, displayName, role }),
});
export const ChangeUserRole = z.object({
  type: z.literal('ChangeUserRole'),
  payload: z.object({ userId: z.uuid(), role }),
});
export const DisableUser = z.object({
  type: z.literal('DisableUser'),
  payload: z.object({ userId: z.uuid() }),
});
export const EnableUser = z.object({
  type: z.literal('EnableUser'),
  payload: z.object({ userId: z.uuid() }),
});

export const ResetPassword = z.object({
  type: z.literal('ResetPassword'),
  payload: z.object({ userId: z.uuid() }),
});

/**
 * A user sets their own password (the /account page, after giving the current one). The router adds
 * `senderId`, who sent it: only the account itself may (an admin resets another's with ResetPassword).
 */
export const ChangeOwnPassword = z.object({
  type: z.literal('ChangeOwnPassword'),
  payload: z.object({ userId: z.uuid() }),
});

export type UserCommand =
  | z.infer<typeof AddUser>
  | z.infer<typeof ChangeUserRole>
  | z.infer<typeof DisableUser>
  | z.infer<typeof EnableUser>
  | z.infer<typeof ResetPassword>
  | (z.infer<typeof ChangeOwnPassword> & { senderId?: string });
