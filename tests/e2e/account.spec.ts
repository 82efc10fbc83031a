import { randomBytes } from 'node:crypto';
import { expect, test } from './support/fixtures.ts';
import { signIn } from './support/sign-in.ts';

/**
 * A user changes their own password from the header's link to /account, in a real browser: a wrong
 * current password is said at its field (which takes the cursor) and changes nothing; the right one
 * changes it, this browser stays signed in, another browser signed in as them goes to the sign-in page on
 * its next page, and only the new password signs in.
 */
test('a user changes their own password at /account; their other browser is signed out', async ({
  browser,
  server,
}) => {
  const url = server.url;
  const email = `account-${randomBytes(4).toString('hex')}@rivals.test`;
  const oldPassword = 'account-old-password-1';
  const newPassword = 'account-new-password-2';

  const admin = await browser.newPage();
  await signIn(admin, url);
  await admin.goto(`${url}/users/new`);
  await admin.getByLabel('Email').fill(email);
  await admin.getByLabel('Name').fill('Account Owner');
  await admin.getByLabel('Password').fill(oldPassword);
  await admin.getByRole('button', { name: 'Add user' }).click();
  await expect(admin).toHaveURL(`${url}/users`);

  const elsewhere = await (await browser.newContext()).newPage();
  await signIn(elsewhere, url, email, oldPassword);
  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page, url, email, oldPassword);

  await page.getByRole('link', { name: /Account Owner/ }).click();
  await expect(page).toHaveURL(`${url}/account`);
  await expect(page.getByRole('heading', { name: 'Your account' })).toBeVisible();

  await page.getByLabel('Current password').fill('not-my-password-9');
  await page.getByLabel('New password', { exact: true }).fill(newPassword);
  await page.getByLabel('New password again').fill(newPassword);
  await page.getByRole('button', { name: 'Change password' }).click();
  await expect(page.locator('#field-currentPassword-error')).toHaveText('That is not your current password.');
  await expect(page.getByLabel('Current password')).toBeFocused();

  await page.getByLabel('Current password').fill(oldPassword);
  await page.getByLabel('New password', { exact: true }).fill(newPassword);
  await page.getByLabel('New password again').fill(newPassword);
  await page.getByRole('button', { name: 'Change password' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Your password is changed.' })).toBeVisible();
  await page.goto(`${url}/competitors`);
  await expect(page).toHaveURL(`${url}/competitors`);

  await elsewhere.goto(`${url}/competitors`);
  await expect(elsewhere).toHaveURL(/\/login/);
  await elsewhere.getByLabel('Email').fill(email);
  await elsewhere.getByLabel('Password').fill(oldPassword);
  await elsewhere.getByRole('button', { name: 'Sign in' }).click();
  await expect(elsewhere.getByRole('alert')).toHaveText('Email or password is incorrect.');
  await elsewhere.getByLabel('Password').fill(newPassword);
  await elsewhere.getByRole('button', { name: 'Sign in' }).click();
  await expect(elsewhere).toHaveURL(`${url}/competitors`);
});
