import { z } from 'zod';
import { directionControlMessage, hasDirectionControls, isBlank, text } from '../text.ts';

export const roles = ['viewer', 'editor', 'admin'] as const;
export type Role = (typeof roles)[number];

export const email = text('Email', { required: 'Email is required.' })
  .trim()
  .toLowerCase()
  .max(254, 'Email must be at most 254 characters.')
  .pipe(z.email('Enter a valid email address.'));

/**
 * A name as people type it (the users form, the AddUser command, `users:add --name`): it shows as the
 * actor in the audit log's sentences, "Last edited by" and the ranking's conflict message, so, like a
 * competitor's name, it may not carry text-direction controls (events/text.ts). The stored events read
 * any text (events.ts), so a name accepted before this rule still replays.
 */
export const displayName = text('Name', { required: 'Name is required.' })
  .trim()
  .min(1, 'Name is required.')
  .max(80, 'Name must be at most 80 characters.')
  .refine((value) => !isBlank(value), 'Name is required.')
  .refine((value) => !hasDirectionControls(value), directionControlMessage('Name'));

export const role = z.enum(roles, { error: 'Role must be viewer, editor or admin.' });
