import { z } from 'zod';
import { isBlank, text } from '../text.ts';

export const roles = ['viewer', 'editor', 'admin'] as const;
export type Role = (typeof roles)[number];

export const email = text('Email', { required: 'Email is required.' })
  .trim()
  .toLowerCase()
  .max(254, 'Email must be at most 254 characters.')
  .pipe(z.email('Enter a valid email address.'));

export const displayName = text('Name', { required: 'Name is required.' })
  .trim()
  .min(1, 'Name is required.')
  .max(80, 'Name must be at most 80 characters.')
  .refine((value) => !isBlank(value), 'Name is required.');

export const role = z.enum(roles, { error: 'Role must be viewer, editor or admin.' });
