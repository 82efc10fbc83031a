import { randomBytes } from 'node:crypto';
import { expect, type Page } from '@playwright/test';

export type Role = 'admin' | 'editor' | 'viewer';

/**
 * Adds a user through /users/new as the signed-in admin and waits for the users list. The email is made
 * unique (its prefix and a random tag); the role is the form's default (viewer) unless given.
 */
export async function addUser(
  page: Page,
  baseUrl: string,
  user: { name: string; password: string; emailPrefix: string; role?: Role },
): Promise<{ email: string; password: string }> {
  const email = `${user.emailPrefix}-${randomBytes(4).toString('hex')}@rivals.test`;
  await page.goto(`${baseUrl}/users/new`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Name').fill(user.name);
  if (user.role) await page.getByLabel('Role').selectOption(user.role);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Add user' }).click();
  await expect(page).toHaveURL(`${baseUrl}/users`);
  return { email, password: user.password };
}
