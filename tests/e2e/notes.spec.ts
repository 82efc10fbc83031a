import { randomBytes } from 'node:crypto';
import type { Browser, Locator, Page, Request } from '@playwright/test';
import { demoCompetitors } from '../../services/bootstrap/demo-competitors.ts';
import { expect, test as base } from './support/fixtures.ts';
import { addCompetitor, csrfToken, deleteCompetitor, putNote } from './support/competitors.ts';
import { waitForLiveMark, type AnsweredChange } from './support/live-mark.ts';
import { signIn } from './support/sign-in.ts';
import { trapXss } from './support/xss-trap.ts';

/**
 * Competitor notes in the browser (issue 6, docs/behaviour.md §5, §6): the SweetAlert2 dialog exactly as
 * docs/behaviour.md describes it, the `update-note` call it sends, the table and battlecard updating in place,
 * the conflict choice between two sessions, server rejections inside the still-open dialog, the history
 * diff and as-of view, the audit log, read-only viewers, and stored XSS in every place a note is shown.
 *
 * Every test that writes uses its own throwaway competitor and deletes it at the end, so the worker's
 * server keeps only the six demo competitors the other specs expect.
 */

type Watched = Window & {
  __xss?: unknown;
  __xssHits?: number;
  __reportXss?: (where: string) => Promise<void>;
  __stillHere?: boolean;
};

const ADMIN_NAME = 'Administrator';
const northwind = demoCompetitors.find((c) => c.name === 'Northwind Analytics');
if (!northwind) throw new Error('the demo data has no Northwind Analytics');

const unique = (prefix: string) => `${prefix} ${randomBytes(4).toString('hex')}`;
/** Every component call the page makes (the dialog must send none unless the user saves). */
function componentCalls(page: Page): Request[] {
  const calls: Request[] = [];
  page.on('request', (request) => {
    if (new URL(request.url()).pathname.startsWith('/components/')) calls.push(request);
  });
  return calls;
}

/**
 * The component calls the page has made so far, known to be complete: the page itself sends a marker
 * request after everything it had started, and the list is read once that marker is seen (requests
 * reach `page.on('request')` in the order the page sends them). A positive signal, not a fixed sleep.
 */
async function componentCallsSoFar(page: Page, calls: Request[]): Promise<string[]> {
  const marker = `/healthz?marker=${randomBytes(6).toString('hex')}`;
  const seen = page.waitForRequest((request) => request.url().endsWith(marker));
  // After a macrotask, so anything the page's own handlers queued (timers of 0, promise callbacks) went first.
  await page.evaluate(async (url) => {
    await new Promise((resolve) => setTimeout(resolve, 0));
    await fetch(url);
  }, marker);
  await seen;
  return calls.map((r) => r.url());
}

/** Every page read (GET of a page or region) the page makes from now on. */
function pageReads(page: Page): string[] {
  const reads: string[] = [];
  page.on('request', (request) => {
    const { pathname } = new URL(request.url());
    if (
      request.method() === 'GET' &&
      request.resourceType() === 'fetch' &&
      pathname.startsWith('/competitors')
    )
      reads.push(request.url());
  });
  return reads;
}

const isNoteCall = (request: Request) =>
  request.method() === 'POST' && new URL(request.url()).pathname === '/components/competitor-notes';

async function gotoReady(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
}

/** Signs in (as the admin unless told), opens the competitor list and records its component calls from then on. */
async function listWatchingCalls(
  page: Page,
  baseUrl: string,
  email?: string,
  password?: string,
): Promise<Request[]> {
  await signIn(page, baseUrl, email, password);
  await gotoReady(page, `${baseUrl}/competitors`);
  return componentCalls(page);
}

/** Marks the current document; if the page navigates, the mark is gone. */
const markDocument = (page: Page) =>
  page.evaluate(() => {
    (window as Watched).__stillHere = true;
  });
const sameDocument = (page: Page) => page.evaluate(() => (window as Watched).__stillHere === true);

function notesDialog(page: Page) {
  const dialog = page.getByRole('dialog');
  return {
    dialog,
    title: dialog.locator('.swal2-title'),
    label: dialog.locator('.swal2-input-label'),
    textarea: dialog.locator('textarea'),
    validation: dialog.locator('.swal2-validation-message'),
    text: dialog.locator('.swal2-html-container'),
    save: dialog.getByRole('button', { name: 'Save', exact: true }),
    cancel: dialog.getByRole('button', { name: 'Cancel', exact: true }),
  };
}

/** The note indicator of a table row. */
const indicator = (page: Page, competitorId: string, column: string): Locator =>
  page.locator(`tr[data-row-id="${competitorId}"] button[data-note][data-column="${column}"]`);

const noteText = (page: Page, column: string) =>
  page.locator(`#battlecard [data-note-card="${column}"] [data-note-text]`);

/** Opens the dialog with `open`, types `value`, saves, and waits until the dialog has closed. */
async function saveThroughDialog(page: Page, open: Locator, value: string): Promise<void> {
  await open.click();
  const d = notesDialog(page);
  await expect(d.textarea).toBeVisible();
  await d.textarea.fill(value);
  const answer = page.waitForResponse((r) => isNoteCall(r.request()));
  await d.save.click();
  expect((await answer).status()).toBe(200);
  await expect(d.dialog).toBeHidden();
}

/** Signs in as the admin and adds a throwaway competitor named `prefix` plus a random suffix. */
async function signInWithThrowaway(
  page: Page,
  baseUrl: string,
  prefix: string,
): Promise<{ id: string; name: string }> {
  await signIn(page, baseUrl);
  const name = unique(prefix);
  return { id: await addCompetitor(page, baseUrl, name), name };
}

/**
 * `throwaway(prefix)`: signs in and adds a throwaway competitor, deleted again once the test has passed, so
 * the worker's server keeps only the six demo competitors the other specs expect.
 */
const test = base.extend<{ throwaway: (prefix: string) => Promise<{ id: string; name: string }> }>({
  throwaway: async ({ page, server }, provide, testInfo) => {
    const added: string[] = [];
    await provide(async (prefix) => {
      const competitor = await signInWithThrowaway(page, server.url, prefix);
      added.push(competitor.id);
      return competitor;
    });
    // As before: a failed test leaves its competitor behind (the page may be anywhere by then).
    if (testInfo.status !== testInfo.expectedStatus) return;
    for (const id of added) await deleteCompetitor(page, server.url, id);
  },
});

async function signedInContext(browser: Browser, baseUrl: string): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page, baseUrl);
  return page;
}

// Several sessions, dialogs and server round trips per test; generous on a busy CI machine.
test.describe.configure({ timeout: 90_000 });

test.describe('the notes dialog', () => {
  test('is titled Notes, labelled, a textarea with Cancel, prefilled exactly; cancel sends nothing', async ({
    page,
    server,
  }) => {
    const calls = await listWatchingCalls(page, server.url);
    const pricing = page.getByRole('button', { name: 'Pricing note for Northwind Analytics', exact: true });
    await expect(pricing).toHaveAttribute('data-value', northwind.notes.pricing);

    await pricing.click();
    const d = notesDialog(page);
    await expect(d.dialog).toBeVisible();
    await expect(d.title).toHaveText('Notes');
    await expect(d.label).toHaveText('Enter competitor notes');
    await expect(d.textarea).toBeVisible();
    await expect(d.textarea).toHaveJSProperty('tagName', 'TEXTAREA');
    await expect(d.dialog.getByRole('textbox', { name: 'Enter competitor notes' })).toBeVisible();
    await expect(d.textarea).toHaveValue(northwind.notes.pricing);
    await expect(d.cancel).toBeVisible();
    await expect(d.save).toBeVisible();

    // Typing and then cancelling changes nothing and sends nothing.
    await d.textarea.fill('Something I changed my mind about');
    await d.cancel.click();
    await expect(d.dialog).toBeHidden();
    await expect(pricing).toHaveAttribute('data-value', northwind.notes.pricing);

    // The battlecard's note opens the same dialog, prefilled with that note.
    await gotoReady(page, `${server.url}/competitors`);
    await page.getByRole('link', { name: 'Northwind Analytics', exact: true }).click();
    await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
    await page.getByRole('button', { name: 'Edit general note', exact: true }).click();
    await expect(d.title).toHaveText('Notes');
    await expect(d.label).toHaveText('Enter competitor notes');
    await expect(d.textarea).toHaveValue(northwind.notes.general);
    await page.keyboard.press('Escape');
    await expect(d.dialog).toBeHidden();
    await expect(noteText(page, 'general')).toHaveText(northwind.notes.general);

    // Nothing was sent, up to a request the page makes after everything above.
    expect(await componentCallsSoFar(page, calls)).toEqual([]);
  });

  test('Escape or a click beside the dialog after typing asks before discarding; Keep editing brings the text back', async ({
    page,
    server,
  }) => {
    const calls = await listWatchingCalls(page, server.url);
    const pricing = page.getByRole('button', { name: 'Pricing note for Northwind Analytics', exact: true });
    const d = notesDialog(page);
    const discard = page.getByRole('dialog', { name: 'Discard your changes?' });
    const typed = 'Half a paragraph\nI would hate to lose';

    await pricing.click();
    await d.textarea.fill(typed);
    await page.keyboard.press('Escape');
    await expect(discard).toBeVisible();
    await expect(discard).toContainText('What you typed in this note has not been saved.');
    // The safe answer has the focus: Enter keeps editing.
    await expect(discard.getByRole('button', { name: 'Keep editing', exact: true })).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(d.title).toHaveText('Notes');
    await expect(d.textarea).toHaveValue(typed);

    // A click beside the dialog asks too; Escape on the question keeps editing as well.
    await page.mouse.click(5, 5);
    await expect(discard).toBeVisible();
    await page.keyboard.press('Escape');
    await expect(d.textarea).toHaveValue(typed);

    // Discard closes it; the next opening shows the saved note again.
    await page.keyboard.press('Escape');
    await discard.getByRole('button', { name: 'Discard', exact: true }).click();
    await expect(page.getByRole('dialog')).toBeHidden();
    await expect(pricing).toHaveAttribute('data-value', northwind.notes.pricing);
    await pricing.click();
    await expect(d.textarea).toHaveValue(northwind.notes.pricing);

    // Nothing typed: Escape closes at once. Cancel is a decision: it closes at once even after typing.
    await page.keyboard.press('Escape');
    await expect(page.getByRole('dialog')).toBeHidden();
    await pricing.click();
    await d.textarea.fill(typed);
    await d.cancel.click();
    await expect(page.getByRole('dialog')).toBeHidden();
    expect(await componentCallsSoFar(page, calls)).toEqual([]);
  });

  test('empty and whitespace-only values show "Value is required!" and send nothing', async ({
    page,
    server,
  }) => {
    const calls = await listWatchingCalls(page, server.url);
    const strengths = page.getByRole('button', {
      name: 'Strengths note for Northwind Analytics',
      exact: true,
    });
    await strengths.click();
    const d = notesDialog(page);
    await expect(d.textarea).toHaveValue(northwind.notes.strengths);

    for (const value of ['', ' ', '   \n\t  \n ']) {
      await d.textarea.fill(value);
      await d.save.click();
      await expect(d.validation).toBeVisible();
      await expect(d.validation).toHaveText('Value is required!');
      // Still open, still holding what was typed.
      await expect(d.dialog).toBeVisible();
      await expect(d.textarea).toHaveValue(value);
    }
    // Cancel still works after the refusals, and closes the dialog.
    await d.cancel.click();
    await expect(d.dialog).toBeHidden();
    expect(await componentCallsSoFar(page, calls)).toEqual([]);
    await expect(strengths).toHaveAttribute('data-value', northwind.notes.strengths);
  });
});

test.describe('saving a note', () => {
  test('from the table: sends update-note with exactly {competitorId, column, value} and updates the row in place', async ({
    page,
    server,
    throwaway,
  }) => {
    const { id, name } = await throwaway('Table Save');
    await gotoReady(page, `${server.url}/competitors?search=${encodeURIComponent(name)}`);
    const calls = componentCalls(page);
    const refetches = pageReads(page);

    const pricing = indicator(page, id, 'pricing');
    await expect(pricing).toHaveAccessibleName(`Pricing note (empty) for ${name}`);
    await expect(pricing).not.toHaveClass(/note-indicator--filled/);
    await expect(pricing).toHaveAttribute('data-version', '0');
    await markDocument(page);

    await pricing.click();
    const d = notesDialog(page);
    await expect(d.textarea).toHaveValue('');
    const text = 'Usage based:\n$0.02 per event, volume tiers from 10M.';
    await d.textarea.fill(text);
    const sent = page.waitForRequest(isNoteCall);
    const answered = page.waitForResponse((r) => isNoteCall(r.request()));
    await d.save.click();

    const request = await sent;
    const body = request.postDataJSON() as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['event', 'expect', 'payload', 'view']);
    expect(body.event).toBe('update-note');
    expect(body.expect).toEqual({ version: 0 });
    // The page it came from: the answer carries its fresh regions (docs/change-path.md).
    expect(body.view).toBe(`/competitors?search=${encodeURIComponent(name)}`);
    const payload = body.payload as Record<string, unknown>;
    expect(Object.keys(payload).sort()).toEqual(['column', 'competitorId', 'value']);
    expect(payload).toEqual({ competitorId: id, column: 'pricing', value: text });
    const headers = await request.allHeaders();
    expect(headers['x-requested-with']).toBe('XMLHttpRequest');
    expect(headers['x-csrf-token']).toBe(await csrfToken(page));
    expect(headers['content-type']).toContain('application/json');

    const response = await answered;
    expect(response.status()).toBe(200);
    const answer = (await response.json()) as AnsweredChange & { status: string; visible: boolean };
    expect(answer.status).toBe('accepted');
    expect(typeof answer.position).toBe('number');
    expect(answer.visible).toBe(true);

    // The dialog closes, a short notice shows, and the row shows the note: no page navigation.
    await expect(d.dialog).toBeHidden();
    await expect(page.getByRole('status').filter({ hasText: 'Saved the pricing note.' })).toBeVisible();
    await expect(pricing).toHaveClass(/note-indicator--filled/);
    await expect(pricing).toHaveAccessibleName(`Pricing note for ${name}`);
    await expect(pricing).toHaveAttribute('data-value', text);
    await expect(pricing).toHaveAttribute('title', text);
    await expect(pricing).toHaveAttribute('data-version', '1');
    expect(await sameDocument(page)).toBe(true);
    expect(await componentCallsSoFar(page, calls)).toHaveLength(1);
    // One request in all: the answer carried the row, and the live echo of this save refreshed nothing
    // (the page records each live message once it has decided what to do about it).
    await waitForLiveMark(page, answer);
    expect(await page.evaluate(() => document.documentElement.dataset.liveRefreshes)).toBeUndefined();
    expect(refetches).toEqual([]);

    // Opening it again is prefilled with the saved text, and carries the new version.
    await pricing.click();
    await expect(d.textarea).toHaveValue(text);
    await d.cancel.click();
    await expect(d.dialog).toBeHidden();

    // The server has it too.
    await gotoReady(page, `${server.url}/competitors/${id}`);
    await expect(noteText(page, 'pricing')).toHaveJSProperty('textContent', text);
    expect(calls).toHaveLength(1);
  });

  test('a note pasted decomposed (NFD) within 10,000 characters is saved, not refused as too large', async ({
    page,
    server,
    throwaway,
  }) => {
    const { id, name } = await throwaway('Decomposed');
    await gotoReady(page, `${server.url}/competitors?search=${encodeURIComponent(name)}`);
    // 10,000 Hangul syllables: 30 kB composed, 29,642 code points and 89 kB decomposed (over 64 kB).
    const composed = Array.from({ length: 10_000 }, (_, i) => String.fromCharCode(0xac00 + i)).join('');
    await indicator(page, id, 'general').click();
    const d = notesDialog(page);
    await expect(d.textarea).toBeVisible();
    await d.textarea.fill(composed.normalize('NFD'));
    const answered = page.waitForResponse((r) => isNoteCall(r.request()));
    await d.save.click();
    const answer = await answered;
    expect(answer.status(), await answer.text()).toBe(200);
    await expect(d.dialog).toBeHidden();
    await expect(indicator(page, id, 'general')).toHaveAttribute('data-version', '1');
  });

  test('from the battlecard: the card shows the text with its line breaks and who edited it, without a reload', async ({
    page,
    server,
    throwaway,
  }) => {
    const { id, name } = await throwaway('Card Save');
    await gotoReady(page, `${server.url}/competitors/${id}`);
    await expect(noteText(page, 'strengths')).toHaveText('No strengths notes yet.');
    await expect(page.locator('[data-note-card="strengths"] [data-note-meta]')).toHaveCount(0);
    await markDocument(page);

    const edit = page.getByRole('button', { name: 'Edit strengths note', exact: true });
    await expect(edit).toHaveAttribute('data-value', '');
    const text = 'Great onboarding.\n\nStrong partner network:\n  - AWS\n  - Azure';
    const sent = page.waitForRequest(isNoteCall);
    await saveThroughDialog(page, edit, text);
    expect((await sent).postDataJSON()).toEqual({
      event: 'update-note',
      payload: { competitorId: id, column: 'strengths', value: text },
      expect: { version: 0 },
      view: `/competitors/${id}`,
    });

    await expect(noteText(page, 'strengths')).toHaveJSProperty('textContent', text);
    // Rendered with its line breaks (innerText follows the CSS), not run together.
    await expect(noteText(page, 'strengths')).toHaveJSProperty('innerText', text);
    await expect(page.locator('[data-note-card="strengths"] [data-note-meta]')).toContainText(
      `Last edited by ${ADMIN_NAME}`,
    );
    await expect(page.getByRole('status').filter({ hasText: 'Saved the strengths note.' })).toBeVisible();
    // The fresh card carries the new value and version for the next edit.
    await expect(page.getByRole('button', { name: 'Edit strengths note', exact: true })).toHaveAttribute(
      'data-value',
      text,
    );
    await expect(page.getByRole('button', { name: 'Edit strengths note', exact: true })).toHaveAttribute(
      'data-version',
      '1',
    );
    // Other notes untouched.
    await expect(noteText(page, 'weaknesses')).toHaveText('No weaknesses notes yet.');
    expect(await sameDocument(page)).toBe(true);

    // A second edit from the refreshed card goes out with version 1 and replaces the text.
    const second = page.waitForRequest(isNoteCall);
    await saveThroughDialog(
      page,
      page.getByRole('button', { name: 'Edit strengths note', exact: true }),
      'Only AWS now.',
    );
    expect((await second).postDataJSON()).toMatchObject({ expect: { version: 1 } });
    await expect(noteText(page, 'strengths')).toHaveText('Only AWS now.');
    expect(await sameDocument(page)).toBe(true);

    // And the table shows it as well.
    await gotoReady(page, `${server.url}/competitors?search=${encodeURIComponent(name)}`);
    await expect(indicator(page, id, 'strengths')).toHaveAttribute('data-value', 'Only AWS now.');
    await expect(indicator(page, id, 'strengths')).toHaveClass(/note-indicator--filled/);
  });
});

test.describe('no lost updates', () => {
  test('two sessions of one user: the stale dialog says it was you elsewhere and shows the saved text; Cancel keeps it, Overwrite keeps mine', async ({
    page,
    browser,
    server,
    throwaway,
  }) => {
    const { id } = await throwaway('Conflict');
    await putNote(page, server.url, id, 'general', 'The original note.');

    const a = page;
    const b = await signedInContext(browser, server.url);
    try {
      const edit = (p: Page) => p.getByRole('button', { name: 'Edit general note', exact: true });
      const openBoth = async (expected: string) => {
        for (const p of [a, b]) {
          await edit(p).click();
          await expect(notesDialog(p).textarea).toHaveValue(expected);
        }
      };

      // --- round 1: A saves first, B is stale and cancels --------------------------------------------
      await gotoReady(a, `${server.url}/competitors/${id}`);
      await gotoReady(b, `${server.url}/competitors/${id}`);
      await openBoth('The original note.');
      const da = notesDialog(a);
      const db = notesDialog(b);
      await da.textarea.fill('Text from A.');
      await da.save.click();
      await expect(da.dialog).toBeHidden();
      await expect(noteText(a, 'general')).toHaveText('Text from A.');

      await db.textarea.fill('Text from B.');
      const stale = b.waitForResponse((r) => isNoteCall(r.request()));
      await db.save.click();
      const staleAnswer = await stale;
      expect(staleAnswer.status()).toBe(409);
      expect(staleAnswer.request().postDataJSON()).toMatchObject({ expect: { version: 1 } });
      await expect(db.title).toHaveText('This note was changed meanwhile');
      // Both sessions are the same admin's: the dialog says it was them, elsewhere (not "Test admin
      // changed it", which reads as somebody else). Another user's name: notes-protocol.test.ts.
      await expect(db.text).toContainText(
        /You changed this note at \d{1,2} \w{3,4} \d{4}, \d{2}:\d{2} UTC in another tab or window, after you opened it here\./,
      );
      await expect(db.text).toContainText('Text from A.');
      // The saved text stands on its own lines (a note's line breaks are kept), not run into the message.
      expect(await db.text.innerText()).toContain('The saved text:\nText from A.\n');
      await expect(db.text).toContainText('or cancel and keep the saved one?');
      await expect(db.dialog.getByRole('button', { name: 'Overwrite with mine', exact: true })).toBeVisible();
      await db.cancel.click();
      await expect(db.dialog).toBeHidden();
      // B's card now shows A's text, and nothing of B's was saved.
      await expect(noteText(b, 'general')).toHaveText('Text from A.');
      await gotoReady(a, `${server.url}/competitors/${id}`);
      await expect(noteText(a, 'general')).toHaveText('Text from A.');

      // --- round 2: A saves again, B is stale and overwrites -----------------------------------------
      await openBoth('Text from A.');
      await da.textarea.fill('Second text from A.');
      await da.save.click();
      await expect(da.dialog).toBeHidden();
      await expect(noteText(a, 'general')).toHaveText('Second text from A.');

      await db.textarea.fill('Second text from B.');
      await db.save.click();
      await expect(db.title).toHaveText('This note was changed meanwhile');
      await expect(db.text).toContainText('Second text from A.');
      const overwrite = b.waitForRequest(isNoteCall);
      await db.dialog.getByRole('button', { name: 'Overwrite with mine', exact: true }).click();
      // The overwrite is sent with the version B has now seen, and saved.
      expect((await overwrite).postDataJSON()).toEqual({
        event: 'update-note',
        payload: { competitorId: id, column: 'general', value: 'Second text from B.' },
        expect: { version: 3 },
        view: `/competitors/${id}`,
      });
      await expect(db.dialog).toBeHidden();
      await expect(b.getByRole('status').filter({ hasText: 'Saved the general note.' })).toBeVisible();
      await expect(noteText(b, 'general')).toHaveText('Second text from B.');
      await gotoReady(a, `${server.url}/competitors/${id}`);
      await expect(noteText(a, 'general')).toHaveText('Second text from B.');

      // The history has every saved version, and none of the cancelled one.
      await gotoReady(a, `${server.url}/competitors/${id}/history?column=general`);
      await expect(a.locator('[data-history-entry]')).toHaveCount(4);
      await expect(a.locator('[data-history-entry="general:4"] ins')).toContainText('B.');
      await expect(a.locator('.history-list')).not.toContainText('Text from B.');
    } finally {
      await b.context().close();
    }
  });

  test('a server-side rejection shows inside the dialog, which stays open with the text', async ({
    page,
    browser,
    server,
  }) => {
    const { id, name } = await signInWithThrowaway(page, server.url, 'Deleted Meanwhile');
    await putNote(page, server.url, id, 'weaknesses', 'Known weakness.');
    await gotoReady(page, `${server.url}/competitors/${id}`);
    await page.getByRole('button', { name: 'Edit weaknesses note', exact: true }).click();
    const d = notesDialog(page);
    await expect(d.textarea).toHaveValue('Known weakness.');
    const typed = 'Typed while someone\nelse deleted it.';
    await d.textarea.fill(typed);

    // Meanwhile an admin in another session deletes the competitor through the list's Delete button.
    const other = await signedInContext(browser, server.url);
    try {
      await gotoReady(other, `${server.url}/competitors?search=${encodeURIComponent(name)}`);
      await other.getByRole('button', { name: `Delete ${name}`, exact: true }).click();
      await other.getByRole('dialog').getByRole('button', { name: 'Yes, delete it!' }).click();
      await expect(other.getByText(`${name} was deleted.`, { exact: true })).toBeVisible();
    } finally {
      await other.context().close();
    }

    const answered = page.waitForResponse((r) => isNoteCall(r.request()));
    await d.save.click();
    expect((await answered).status()).toBe(404);
    await expect(d.validation).toBeVisible();
    await expect(d.validation).toHaveText('This competitor was deleted.');
    await expect(d.dialog).toBeVisible();
    await expect(d.title).toHaveText('Notes');
    await expect(d.textarea).toHaveValue(typed);
    // The buttons work again (the loader is gone), and cancelling closes it.
    await expect(d.save).toBeEnabled();
    await d.cancel.click();
    await expect(d.dialog).toBeHidden();

    // Nothing was saved; the deleted competitor's history stays reviewable.
    await gotoReady(page, `${server.url}/competitors/${id}/history`);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(`History of ${name}`);
    await expect(page.getByText('This competitor was deleted. Its history stays reviewable.')).toBeVisible();
    await expect(page.locator('[data-history-entry]')).toHaveCount(1);
    await expect(page.locator('[data-history-entry="weaknesses:1"] ins')).toHaveText('Known weakness.');
    await expect(page.locator('.history-list')).not.toContainText('Typed while');
  });
});

test.describe('history and audit', () => {
  test('history shows each version as a word diff and filters by column; the as-of view shows the earlier text', async ({
    page,
    server,
    throwaway,
  }) => {
    const { id, name } = await throwaway('History');
    await gotoReady(page, `${server.url}/competitors/${id}`);
    const pricing = () => page.getByRole('button', { name: 'Edit pricing note', exact: true });

    await saveThroughDialog(page, pricing(), 'Per seat list price with annual billing');
    await expect(noteText(page, 'pricing')).toHaveText('Per seat list price with annual billing');
    // A whole second after the first edit was stored, and before the second: the as-of moment. An "as of"
    // is read through the end of its second (docs/decisions/0025), so the second edit waits for the next.
    await page.waitForTimeout(1_100);
    const between = new Date(Math.floor(Date.now() / 1000) * 1000);
    await expect.poll(() => Date.now() >= between.getTime() + 1000).toBe(true);
    await saveThroughDialog(page, pricing(), 'Per seat discount price with monthly billing');
    await expect(noteText(page, 'pricing')).toHaveText('Per seat discount price with monthly billing');
    await saveThroughDialog(
      page,
      page.getByRole('button', { name: 'Edit general note', exact: true }),
      'Unrelated general note',
    );

    await page.getByRole('link', { name: 'History', exact: true }).click();
    await expect(page).toHaveURL(`${server.url}/competitors/${id}/history`);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(`History of ${name}`);
    await expect(page.locator('[data-history-entry]')).toHaveCount(3);

    // The second pricing version: only the changed words are marked.
    const v2 = page.locator('[data-history-entry="pricing:2"]');
    expect((await v2.locator('del').allTextContents()).map((t) => t.trim())).toEqual(['list', 'annual']);
    expect((await v2.locator('ins').allTextContents()).map((t) => t.trim())).toEqual(['discount', 'monthly']);
    await expect(v2.locator('.diff')).toHaveText('Per seat list discount price with annual monthly billing');
    await expect(v2).toContainText(ADMIN_NAME);
    await expect(v2).toContainText('version 2');
    // The first version: all of it added, nothing removed.
    const v1 = page.locator('[data-history-entry="pricing:1"]');
    await expect(v1.locator('ins')).toHaveText('Per seat list price with annual billing');
    await expect(v1.locator('del')).toHaveCount(0);
    // Each entry says when, as a machine-readable time.
    const times = await page
      .locator('[data-history-entry^="pricing:"] time')
      .evaluateAll((els) => els.map((e) => e.getAttribute('datetime')));
    expect(times).toHaveLength(2);
    for (const t of times) expect(Number.isNaN(Date.parse(t ?? ''))).toBe(false);

    // Filter by column.
    await page.getByLabel('Note').selectOption('pricing');
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    await expect(page).toHaveURL(/[?&]column=pricing/);
    await expect(page.locator('[data-history-entry]')).toHaveCount(2);
    await expect(page.locator('[data-history-entry^="general:"]')).toHaveCount(0);

    // As of a moment between the two pricing edits (UTC, to the second): the earlier text, marked historical.
    // Written as the input holds it: a datetime-local value drops its seconds when they are :00.
    const asOf = between.toISOString().slice(0, between.getUTCSeconds() === 0 ? 16 : 19);
    await page.getByLabel('As of (UTC)').fill(asOf);
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    await expect(page).toHaveURL(new RegExp(`[?&]asOf=${encodeURIComponent(asOf)}`));
    const banner = page.locator('.as-of .historical-banner');
    await expect(banner).toBeVisible();
    await expect(banner).toContainText('Historical view');
    await expect(banner).toContainText('This is not the current state.');
    const historical = page.locator('.as-of #battlecard');
    await expect(historical.locator('[data-note-card="pricing"] [data-note-text]')).toHaveText(
      'Per seat list price with annual billing',
    );
    await expect(historical.locator('[data-note-card="general"] [data-note-text]')).toHaveText(
      'No general notes yet.',
    );
    // Read-only: no edit buttons in the past.
    await expect(historical.locator('button[data-note]')).toHaveCount(0);
    await expect(page.getByLabel('As of (UTC)')).toHaveValue(asOf);

    // Now (minutes ahead) it shows the latest text; before the competitor existed, nothing.
    const later = new Date(Date.now() + 60_000).toISOString().slice(0, 16);
    await gotoReady(page, `${server.url}/competitors/${id}/history?asOf=${later}`);
    await expect(page.locator('.as-of [data-note-card="pricing"] [data-note-text]')).toHaveText(
      'Per seat discount price with monthly billing',
    );
    await gotoReady(page, `${server.url}/competitors/${id}/history?asOf=2001-01-01T00:00`);
    await expect(page.locator('.as-of')).toContainText(`${name} did not exist at that moment.`);

    // The current battlecard is unaffected by looking at the past.
    await gotoReady(page, `${server.url}/competitors/${id}`);
    await expect(noteText(page, 'pricing')).toHaveText('Per seat discount price with monthly billing');
  });

  test('the audit log lists the note edit with its actor and links to the competitor history', async ({
    page,
    server,
    throwaway,
  }) => {
    const { id, name } = await throwaway('Audited');
    await gotoReady(page, `${server.url}/competitors/${id}`);
    await saveThroughDialog(
      page,
      page.getByRole('button', { name: 'Edit weaknesses note', exact: true }),
      'Weak API rate limits',
    );

    await gotoReady(page, `${server.url}/audit`);
    await page.getByRole('searchbox').fill(name);
    const rows = page.locator('#audit-table tr[data-row-id]');
    const edit = rows.filter({ hasText: 'CompetitorNoteUpdated' });
    await expect(edit).toHaveCount(1);
    await expect(edit.locator('td[data-label="Actor"]')).toHaveText(ADMIN_NAME);
    await expect(edit.locator('td[data-label="What changed"]')).toHaveText(
      'Edited the weaknesses note (version 1): Weak API rate limits',
    );
    const link = edit.getByRole('link', { name, exact: true });
    await expect(link).toHaveAttribute('href', `/competitors/${id}/history`);
    // The competitor's other events are there too (added, name reserved).
    await expect(rows.filter({ hasText: 'CompetitorAdded' })).toHaveCount(1);

    await link.click();
    await expect(page).toHaveURL(`${server.url}/competitors/${id}/history`);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(`History of ${name}`);
    await expect(page.locator('[data-history-entry="weaknesses:1"] ins')).toHaveText('Weak API rate limits');
  });
});

const xssPayloads = {
  strengths: '<img src=x onerror=window.__xss=1>',
  weaknesses: '<script>window.__xss=1</script>',
  general: '"><svg onload=window.__xss=1>',
} as const;

test('XSS payloads saved as notes stay text in the table, dialog prefill, battlecard, history and audit', async ({
  page,
  server,
  throwaway,
}) => {
  const { hits, reported, dialogs } = await trapXss(page);
  const expectInert = async (where: string) => {
    expect(await hits(), where).toBe(0);
    const injected = await page.evaluate(
      () =>
        document.querySelectorAll('img[src="x"], svg[onload], [onerror], [onload], script:not([nonce])')
          .length,
    );
    expect(injected, where).toBe(0);
    expect(reported, where).toEqual([]);
    expect(dialogs, where).toEqual([]);
  };

  const { id, name } = await throwaway('Xss Notes');
  const list = `${server.url}/competitors?search=${encodeURIComponent(name)}`;

  // Saved through the dialog from the table.
  await gotoReady(page, list);
  for (const [column, payload] of Object.entries(xssPayloads)) {
    await saveThroughDialog(page, indicator(page, id, column), payload);
    await expect(indicator(page, id, column)).toHaveAttribute('data-value', payload);
    await expectInert(`table after saving ${payload}`);
  }

  // The table: the attributes hold the literal text; a fresh server render does too.
  await gotoReady(page, list);
  for (const [column, payload] of Object.entries(xssPayloads)) {
    await expect(indicator(page, id, column)).toHaveAttribute('data-value', payload);
    await expect(indicator(page, id, column)).toHaveAttribute('title', payload);
  }
  await expectInert('table');

  // The dialog prefill.
  const d = notesDialog(page);
  for (const [column, payload] of Object.entries(xssPayloads)) {
    await indicator(page, id, column).click();
    await expect(d.textarea).toHaveValue(payload);
    await d.cancel.click();
    await expect(d.dialog).toBeHidden();
    await expectInert(`dialog prefilled with ${payload}`);
  }

  // The battlecard, and its dialog prefill.
  await gotoReady(page, `${server.url}/competitors/${id}`);
  for (const [column, payload] of Object.entries(xssPayloads)) {
    await expect(noteText(page, column)).toHaveText(payload);
    await expect(noteText(page, column)).toHaveJSProperty('textContent', payload);
  }
  await page.getByRole('button', { name: 'Edit weaknesses note', exact: true }).click();
  await expect(d.textarea).toHaveValue(xssPayloads.weaknesses);
  await d.cancel.click();
  await expectInert('battlecard');

  // The history (and its as-of card).
  await gotoReady(
    page,
    `${server.url}/competitors/${id}/history?asOf=${new Date(Date.now() + 60_000).toISOString().slice(0, 16)}`,
  );
  for (const [column, payload] of Object.entries(xssPayloads)) {
    await expect(page.locator(`[data-history-entry="${column}:1"] ins`)).toHaveText(payload);
    await expect(page.locator(`.as-of [data-note-card="${column}"] [data-note-text]`)).toHaveText(payload);
  }
  await expectInert('history');

  // The audit log.
  await gotoReady(page, `${server.url}/audit?search=${encodeURIComponent(name)}`);
  const summaries = await page.locator('#audit-table td[data-label="What changed"]').allTextContents();
  for (const [column, payload] of Object.entries(xssPayloads)) {
    expect(summaries).toContain(`Edited the ${column} note (version 1): ${payload}`);
  }
  await expectInert('audit log');
});

test('a viewer sees notes read-only, and the server refuses their update-note', async ({
  page,
  browser,
  server,
}) => {
  await signIn(page, server.url);
  const email = `viewer-${randomBytes(4).toString('hex')}@rivals.test`;
  const password = 'viewer-password-0123';
  await gotoReady(page, `${server.url}/users/new`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Name').fill('Notes Viewer');
  await page.getByLabel('Role').selectOption('viewer');
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Add user' }).click();
  await expect(page).toHaveURL(`${server.url}/users`);

  const context = await browser.newContext();
  const viewer = await context.newPage();
  try {
    const calls = await listWatchingCalls(viewer, server.url, email, password);
    const pricing = viewer.getByRole('button', { name: 'Pricing note for Northwind Analytics', exact: true });
    await expect(pricing).toHaveAttribute('data-can-edit', 'false');
    await pricing.click();
    const d = notesDialog(viewer);
    await expect(d.title).toHaveText('Notes');
    await expect(d.text).toHaveText(northwind.notes.pricing);
    await expect(d.text).toHaveCSS('white-space', 'pre-wrap');
    await expect(d.textarea).toBeHidden();
    await d.dialog.getByRole('button', { name: 'Close', exact: true }).click();
    await expect(d.dialog).toBeHidden();
    // Empty notes cannot be opened at all by a viewer.
    const kestrel = viewer.getByRole('button', {
      name: 'Pricing note (empty) for Kestrel Labs',
      exact: true,
    });
    await expect(kestrel).toBeDisabled();

    // No edit buttons on the battlecard.
    await viewer.getByRole('link', { name: 'Northwind Analytics', exact: true }).click();
    await expect(viewer.locator('html')).toHaveAttribute('data-ready', 'true');
    await expect(noteText(viewer, 'pricing')).toHaveText(northwind.notes.pricing);
    await expect(viewer.locator('#battlecard button[data-note]')).toHaveCount(0);
    expect(await componentCallsSoFar(viewer, calls)).toEqual([]);

    // The server is the guard: a hand-made call is refused and changes nothing.
    const competitorId = (await viewer.locator('#battlecard').getAttribute('data-competitor-id')) ?? '';
    const response = await viewer.request.post(`${server.url}/components/competitor-notes`, {
      headers: { 'X-Requested-With': 'XMLHttpRequest', 'X-CSRF-Token': await csrfToken(viewer) },
      data: { event: 'update-note', payload: { competitorId, column: 'pricing', value: 'Viewer was here' } },
    });
    expect(response.status()).toBe(403);
    await viewer.reload();
    await expect(noteText(viewer, 'pricing')).toHaveText(northwind.notes.pricing);
  } finally {
    await context.close();
  }
});
