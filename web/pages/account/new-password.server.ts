import { z } from 'zod';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '#infra/passwords.ts';

/** A new password and its repetition (/account, and an admin's "Set password"): the same rules and words. */
export const newPasswordTwice = z
  .object({
    newPassword: z
      .string()
      .min(PASSWORD_MIN_LENGTH, `The new password must be at least ${PASSWORD_MIN_LENGTH} characters.`)
      .max(PASSWORD_MAX_LENGTH, `The new password must be at most ${PASSWORD_MAX_LENGTH} characters.`),
    repeatPassword: z.string(),
  })
  .refine((form) => form.repeatPassword === form.newPassword, {
    path: ['repeatPassword'],
    message: 'The two new passwords differ: type the same new password in both fields.',
  });
