import { randomBytes } from 'node:crypto';
import type { Browser, Page } from '@playwright/test';
import { addCompetitor, deleteCompetitor, putNote } from './support/competitors.ts';
import { expect, test } from './support/fixtures.ts';
import { signIn } from './support/sign-in.ts';

/*
 * Notes without JavaScript (helper-72's review): the notes' Edit buttons on the battlecard and the note
 * indicators in the table were `type="button"` and did nothing at all in a browser without scripts, so a
 * note could not be changed there. They now submit to a plain form with the dialog's words.
 */

const unique = (prefix: string) => `${prefix} ${randomBytes(4).toString('hex')}`;

/** Signed in, in a browser without JavaScript, with a competitor of its own (deleted afterwards). */
async function withNoScriptCompetitor(
  browser: Browser,
  url: string,
  prefix: string,
  body: (page: Page, competitor: { id: string; name: string }) => Promise<void>,
): Promise<void> {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await signIn(page, url);
  const name = unique(prefix);
  const id = await addCompetitor(page, url, name);
  try {
    await body(page, { id, name });
  } finally {
    await deleteCompetitor(page, url, id);
    await context.close();
  }
}

test('without JavaScript, a note is edited from the battlecard in a plain form with the dialog’s words', async ({
  browser,
  server,
}) => {
  await withNoScriptCompetitor(browser, server.url, 'No-script Notes', async (page, { id, name }) => {
    await page.goto(`${server.url}/competitors/${id}`);
    await page.getByRole('button', { name: 'Edit strengths note' }).click();
    await expect(page).toHaveTitle(`Strengths note of ${name} · Rivals`);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Notes');

    // Required, as in the dialog.
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByText('Value is required!')).toBeVisible();

    await page.getByLabel('Enter competitor notes').fill('Fast onboarding, no script needed.');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page).toHaveURL(`${server.url}/competitors/${id}`);
    await expect(page.getByText('Saved the strengths note.')).toBeVisible();
    await expect(page.locator('[data-note-card="strengths"] [data-note-text]')).toHaveText(
      'Fast onboarding, no script needed.',
    );

    // The table's note indicator leads to the same form, prefilled.
    await page.goto(`${server.url}/competitors?search=${encodeURIComponent(name)}`);
    await page.getByRole('button', { name: `Strengths note for ${name}` }).click();
    await expect(page.getByLabel('Enter competitor notes')).toHaveValue('Fast onboarding, no script needed.');
  });
});

test('without JavaScript, a note saved meanwhile by someone else is shown, and Save again replaces it', async ({
  browser,
  server,
}) => {
  await withNoScriptCompetitor(browser, server.url, 'No-script Conflict', async (page, { id }) => {
    await page.goto(`${server.url}/competitors/${id}/notes/pricing`);
    await page.getByLabel('Enter competitor notes').fill('Mine');
    // A colleague's save lands while the form is open.
    await putNote(page, server.url, id, 'pricing', 'Theirs');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByRole('alert')).toContainText('changed this note');
    await expect(page.getByText('Theirs', { exact: true })).toBeVisible();
    await expect(page.getByLabel('Enter competitor notes')).toHaveValue('Mine');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page).toHaveURL(`${server.url}/competitors/${id}`);
    await expect(page.locator('[data-note-card="pricing"] [data-note-text]')).toHaveText('Mine');
  });
});

test('an address naming no note column is a 404 with a way back, not a server error', async ({
  page,
  server,
}) => {
  await signIn(page, server.url);
  const id = await addCompetitor(page, server.url, unique('No-script Column'));
  try {
    const response = await page.goto(`${server.url}/competitors/${id}/notes/secrets`);
    expect(response?.status()).toBe(404);
    await expect(page.getByRole('link', { name: 'Back to competitors' })).toBeVisible();
  } finally {
    await deleteCompetitor(page, server.url, id);
  }
});
