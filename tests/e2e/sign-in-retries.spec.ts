import type { BrowserContext, Page } from '@playwright/test';
import { expect, test } from './support/fixtures.ts';
import { reloadTheErrorPage } from './support/error-page.ts';
import { TEST_ADMIN_EMAIL, TEST_ADMIN_PASSWORD } from './support/server.ts';

/**
 * A retry is normal, and so is a second tab: the sign-in form sent again once its first answer's cookie
 * had arrived, or left open in another tab while this browser signed in (or in and out), used to answer
 * 403 "Your session form token is missing or out of date. Reload the page and try again." (decision
 * 0027's sign-in replaces the cookie the form's token came from). docs/behaviour.md, sign-in.
 */

const STALE = 'Your sign-in page was out of date. Sign in again.';

async function fillSignIn(page: Page, email = TEST_ADMIN_EMAIL, password = TEST_ADMIN_PASSWORD) {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
}

/** Tab one signs in; tab two then opens /ranking, signed in too. */
async function signedInWithASecondTab(context: BrowserContext, url: string) {
  const one = await context.newPage();
  await one.goto(`${url}/login`);
  await fillSignIn(one);
  await one.getByRole('button', { name: 'Sign in' }).click();
  await expect(one).toHaveURL(`${url}/competitors`);
  const two = await context.newPage();
  await two.goto(`${url}/ranking`);
  return { one, two };
}

const signedInAs = async (page: Page) =>
  page.evaluate(async () => {
    const answer = await fetch('/session', { headers: { Accept: 'application/json' } });
    return ((await answer.json()) as { userId: string | null }).userId;
  });

test('the sign-in sent again once its first answer’s cookie had arrived (a retried POST) lands where the first was going', async ({
  page,
  server,
}) => {
  // The first answer's headers arrive (the session cookie is kept) and the rest is lost: the browser
  // shows its connection error, and the user reloads it, which posts the same form again, now with the
  // new cookie and the form's old token.
  const posts: string[] = [];
  let first = true;
  await page.route(
    (url) => url.pathname === '/login',
    async (route) => {
      if (route.request().method() !== 'POST') return route.fallback();
      posts.push(route.request().postData() ?? '');
      if (!first) return route.fallback();
      first = false;
      const answer = await route.fetch({ maxRedirects: 0 });
      expect(answer.status()).toBe(302);
      const cookies = answer
        .headersArray()
        .filter((h) => h.name.toLowerCase() === 'set-cookie')
        .map((h) => h.value.split(';')[0] ?? '')
        .map((pair) => ({ name: pair.split('=')[0] ?? '', value: pair.slice(pair.indexOf('=') + 1) }))
        .filter((c) => c.value !== '');
      await page.context().addCookies(cookies.map((c) => ({ ...c, url: server.url })));
      await route.abort('connectionreset');
    },
  );
  await page.goto(`${server.url}/login?next=%2Franking`);
  await fillSignIn(page);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.url()).toMatch(/^chrome-error:/);
  const session = (await page.context().cookies()).find((c) => c.name === 'rivals_session')?.value;
  expect(session).toBeTruthy();

  await reloadTheErrorPage(page);

  await expect(page).toHaveURL(`${server.url}/ranking`);
  expect(posts).toHaveLength(2);
  expect(posts[1]).toBe(posts[0]); // the same form, its token and key
  // The same session: the second answer did not make another.
  expect((await page.context().cookies()).find((c) => c.name === 'rivals_session')?.value).toBe(session);
  expect(await signedInAs(page)).toBeTruthy();
});

test('two tabs on the sign-in page: the second, sent after the first signed in, goes where it was going', async ({
  context,
  server,
}) => {
  const one = await context.newPage();
  const two = await context.newPage();
  await one.goto(`${server.url}/login`);
  await two.goto(`${server.url}/login?next=%2Fsegments`);
  await fillSignIn(one);
  await one.getByRole('button', { name: 'Sign in' }).click();
  await expect(one).toHaveURL(`${server.url}/competitors`);

  await fillSignIn(two);
  await two.getByRole('button', { name: 'Sign in' }).click();

  await expect(two).toHaveURL(`${server.url}/segments`);
  await expect(two.getByRole('alert')).toHaveCount(0);
});

test('two tabs on the sign-in page: the second, sent after the first signed in and out, comes back fresh with the email kept', async ({
  context,
  server,
}) => {
  const one = await context.newPage();
  const two = await context.newPage();
  await one.goto(`${server.url}/login`);
  await two.goto(`${server.url}/login?next=%2Fsegments`);
  await fillSignIn(one);
  await one.getByRole('button', { name: 'Sign in' }).click();
  await expect(one).toHaveURL(`${server.url}/competitors`);
  await one.getByRole('button', { name: 'Sign out' }).click();
  await expect(one).toHaveURL(`${server.url}/login`);

  await fillSignIn(two);
  await two.getByRole('button', { name: 'Sign in' }).click();

  await expect(two.getByRole('alert')).toHaveText(STALE);
  await expect(two.getByLabel('Email')).toHaveValue(TEST_ADMIN_EMAIL);
  await expect(two.getByLabel('Password')).toHaveValue('');
  await expect(two.getByLabel('Password')).toBeFocused();
  expect(await signedInAs(two)).toBeNull();
  // Typing the password again is all it takes.
  await two.getByLabel('Password').fill(TEST_ADMIN_PASSWORD);
  await two.getByRole('button', { name: 'Sign in' }).click();
  await expect(two).toHaveURL(`${server.url}/segments`);
});

test('a Sign out clicked twice, or in a second tab after the first signed out, lands signed out without an error', async ({
  context,
  server,
}) => {
  const { one, two } = await signedInWithASecondTab(context, server.url);

  await one.getByRole('button', { name: 'Sign out' }).click();
  await expect(one).toHaveURL(`${server.url}/login`);
  await two.getByRole('button', { name: 'Sign out' }).click();

  await expect(two).toHaveURL(`${server.url}/login`);
  await expect(two.getByRole('heading', { name: 'Sign in to Rivals' })).toBeVisible();
  expect(await signedInAs(two)).toBeNull();
});

test('a Sign out from a tab opened before this browser signed in again asks again, with a button that works', async ({
  context,
  server,
}) => {
  const { one, two } = await signedInWithASecondTab(context, server.url);
  // Tab one signs out and in again: tab two's page now holds the ended session's token.
  await one.getByRole('button', { name: 'Sign out' }).click();
  await fillSignIn(one);
  await one.getByRole('button', { name: 'Sign in' }).click();
  await expect(one).toHaveURL(`${server.url}/competitors`);
  const signedIn = await signedInAs(one);
  expect(signedIn).toBeTruthy();

  // Said 403 "Your session form token is missing or out of date. Reload the page and try again." before.
  await two.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
  await expect(two.getByRole('heading', { name: 'Sign out?' })).toBeVisible();
  await expect(
    two.getByText('its Sign out button was out of date and you are still signed in'),
  ).toBeVisible();
  expect(await signedInAs(two)).toBe(signedIn);
  await two.getByRole('main').getByRole('button', { name: 'Sign out' }).click();
  await expect(two).toHaveURL(`${server.url}/login`);
  expect(await signedInAs(two)).toBeNull();
});
