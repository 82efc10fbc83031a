import { expect, test } from './support/fixtures.ts';
import { signIn } from './support/sign-in.ts';
import { addUser } from './support/users.ts';

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
  const oldPassword = 'account-old-password-1';
  const newPassword = 'account-new-password-2';

  const admin = await browser.newPage();
  await signIn(admin, url);
  const { email } = await addUser(admin, url, {
    name: 'Account Owner',
    emailPrefix: 'account',
    password: oldPassword,
  });

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

/**
 * An admin sets the password of a user who forgot theirs, from the users list: two passwords that differ
 * are said at the second field; a set password signs the user out of the browser they were in, and only
 * the new one signs in.
 */
test("an admin sets a user's password from /users; the user is signed out and signs in with it", async ({
  browser,
  server,
}) => {
  const url = server.url;
  const oldPassword = 'forgotten-password-1';
  const setPassword = 'set-by-the-admin-2';

  const admin = await browser.newPage();
  await signIn(admin, url);
  const { email } = await addUser(admin, url, {
    name: 'Forgetful Fay',
    emailPrefix: 'forgot',
    password: oldPassword,
  });

  const user = await (await browser.newContext()).newPage();
  await signIn(user, url, email, oldPassword);

  await admin.goto(`${url}/users?search=${encodeURIComponent(email)}`);
  await admin.getByRole('link', { name: 'Set password of Forgetful Fay' }).click();
  await expect(admin.getByRole('heading', { name: 'Set a password for Forgetful Fay' })).toBeVisible();
  await admin.getByLabel('New password', { exact: true }).fill(setPassword);
  await admin.getByLabel('New password again').fill(`${setPassword}x`);
  await admin.getByRole('button', { name: 'Set password' }).click();
  await expect(admin.locator('#field-repeatPassword-error')).toContainText('The two new passwords differ');
  await expect(admin.getByLabel('New password again')).toBeFocused();

  await admin.getByLabel('New password', { exact: true }).fill(setPassword);
  await admin.getByLabel('New password again').fill(setPassword);
  await admin.getByRole('button', { name: 'Set password' }).click();
  await expect(admin).toHaveURL(`${url}/users`);
  await expect(
    admin.getByRole('status').filter({ hasText: "Forgetful Fay's password is set" }),
  ).toBeVisible();

  await user.goto(`${url}/competitors`);
  await expect(user).toHaveURL(/\/login/);
  await user.getByLabel('Email').fill(email);
  await user.getByLabel('Password').fill(oldPassword);
  await user.getByRole('button', { name: 'Sign in' }).click();
  await expect(user.getByRole('alert')).toHaveText('Email or password is incorrect.');
  await user.getByLabel('Password').fill(setPassword);
  await user.getByRole('button', { name: 'Sign in' }).click();
  await expect(user).toHaveURL(`${url}/competitors`);
});
