import { expect, type Page } from '@playwright/test';
import { TEST_ADMIN_EMAIL, TEST_ADMIN_PASSWORD } from './server.ts';

/** Signs in through the real form (as the spawned server's admin by default) and lands on /competitors. */
export async function signIn(
  page: Page,
  baseUrl: string,
  email = TEST_ADMIN_EMAIL,
  password = TEST_ADMIN_PASSWORD,
): Promise<void> {
  await page.goto(`${baseUrl}/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(`${baseUrl}/competitors`);
}
