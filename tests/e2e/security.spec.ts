import type { Page } from '@playwright/test';
import { expect, test } from './support/fixtures.ts';
import { signIn } from './support/sign-in.ts';
import { trapXss } from './support/xss-trap.ts';

/**
 * Browser-side security: a strict, per-response nonce CSP that the app itself never violates (pages,
 * islands and the SweetAlert2 dialog included), and stored/reflected XSS payloads that stay text
 * everywhere they are shown: table, search, battlecard, title, flash, users list.
 */

/** What the init scripts leave on `window`. */
type Watched = Window & {
  __xssHits?: number;
  __cspViolations?: string[];
  __reportXss?: (where: string) => Promise<void>;
};

const signInAsAdmin = (page: Page, baseUrl: string) => signIn(page, baseUrl);

/** CSP violations as the browser reports them: console messages and `securitypolicyviolation` events. */
async function watchCsp(page: Page): Promise<{ console: string[]; inPage: () => Promise<string[]> }> {
  const consoleMessages: string[] = [];
  page.on('console', (message) => {
    if (/content security policy/i.test(message.text())) consoleMessages.push(message.text());
  });
  // An init script runs before the page's own scripts and is not itself subject to the page's CSP.
  await page.addInitScript(() => {
    const w = window as Watched;
    w.__cspViolations = [];
    document.addEventListener('securitypolicyviolation', (event) => {
      w.__cspViolations?.push(`${event.violatedDirective} blocked ${event.blockedURI || 'inline'}`);
    });
  });
  return {
    console: consoleMessages,
    inPage: () => page.evaluate(() => (window as Watched).__cspViolations ?? []),
  };
}

const nonceOf = (csp: string) => /'nonce-([^']+)'/.exec(csp)?.[1];

test.describe('Content-Security-Policy', () => {
  test('every HTML response has its own nonce and no unsafe-inline/unsafe-eval', async ({
    page,
    request,
    server,
  }) => {
    await signInAsAdmin(page, server.url);
    const nonces = new Set<string>();
    for (let i = 0; i < 100; i++) {
      // Half signed in (the browser's cookies), half a signed-out visitor.
      const response =
        i % 2 === 0
          ? await page.request.get(`${server.url}/competitors`)
          : await request.get(`${server.url}/login`);
      expect(response.status()).toBe(200);
      expect(response.headers()['content-type']).toContain('text/html');
      const csp = response.headers()['content-security-policy'] ?? '';
      const nonce = nonceOf(csp);
      expect(nonce, csp).toMatch(/^[A-Za-z0-9+/]{20,}={0,2}$/);
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|unsafe-hashes/);
      expect(csp).toMatch(/script-src 'nonce-[^']+' 'strict-dynamic'/);
      expect(csp).toContain("object-src 'none'");
      expect(csp).toContain("base-uri 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      // The page's own module script carries exactly this response's nonce.
      const html = await response.text();
      expect(/<script\b[^>]*\bnonce="([^"]+)"/.exec(html)?.[1]).toBe(nonce);
      nonces.add(nonce ?? '');
    }
    expect(nonces.size).toBe(100);
  });

  test('the list, a battlecard and the delete dialog run without a single violation', async ({
    page,
    server,
  }) => {
    const csp = await watchCsp(page);
    await signInAsAdmin(page, server.url);

    await page.goto(`${server.url}/competitors`);
    await expect(page.locator('[data-island="table-toolbar"][data-hydrated="true"]')).toBeAttached();
    await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
    expect(await csp.inPage()).toEqual([]);

    await page.getByRole('link', { name: 'Northwind Analytics', exact: true }).click();
    await expect(page).toHaveURL(/\/competitors\/[0-9a-f-]{36}$/);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Northwind Analytics');
    await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
    expect(await csp.inPage()).toEqual([]);

    await page.goto(`${server.url}/competitors`);
    await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
    const row = page.locator('tr[data-row-id]', {
      has: page.getByRole('link', { name: 'Northwind Analytics', exact: true }),
    });
    await expect(row).toHaveCount(1);
    await page.getByRole('button', { name: /Delete Northwind/ }).click();

    const dialog = page.getByRole('dialog');
    await expect(dialog).toBeVisible();
    await expect(dialog.locator('.swal2-title')).toHaveText('Are you sure?');
    await expect(dialog.locator('.swal2-html-container')).toHaveText('This action cannot be undone!');
    const confirm = dialog.getByRole('button', { name: 'Yes, delete it!' });
    const cancel = dialog.getByRole('button', { name: 'Cancel' });
    await expect(confirm).toBeVisible();
    await expect(cancel).toBeVisible();
    // Styled by app.css (SweetAlert2's own <style> injection would be a violation): the popup is laid out.
    const box = await dialog.boundingBox();
    expect(box?.width ?? 0).toBeGreaterThan(200);
    expect(await csp.inPage()).toEqual([]);

    await cancel.click();
    await expect(dialog).toBeHidden();
    await expect(page).toHaveURL(`${server.url}/competitors`);
    await expect(row).toHaveCount(1);
    await page.reload();
    await expect(page.getByRole('link', { name: 'Northwind Analytics', exact: true })).toBeVisible();

    expect(await csp.inPage()).toEqual([]);
    expect(csp.console).toEqual([]);
  });
});

const payloads = [
  '<script>window.__xss=1</script>',
  '<img src=x onerror="window.__xss=1">',
  '"><svg onload=window.__xss=1>',
  'javascript:window.__xss=1',
  '<a href="javascript:window.__xss=1">x</a>',
  '</title><script>window.__xss=1</script>',
  '<iframe srcdoc="<script>parent.__xss=1</script>">',
  '<b><i>unclosed',
];

test.describe('stored and reflected XSS', () => {
  test('payloads in competitor and user names stay text everywhere', async ({ page, server }) => {
    // Some 40 pages and forms in one test: 80 s on a quiet machine, over 120 s on a loaded one.
    test.setTimeout(300_000);
    const { hits, reported, dialogs } = await trapXss(page);
    const csp = await watchCsp(page);

    /** No payload ran, none became markup, and the browser blocked nothing (nothing tried). */
    const expectInert = async (where: string) => {
      expect(await hits(), where).toBe(0);
      const injected = await page.evaluate(
        () =>
          document.querySelectorAll(
            'img[src="x"], [onerror], [onload], iframe, a[href^="javascript:" i], b, i, script:not([nonce])',
          ).length,
      );
      expect(injected, where).toBe(0);
      expect(await csp.inPage(), where).toEqual([]);
      expect(reported, where).toEqual([]);
      expect(dialogs, where).toEqual([]);
    };

    await signInAsAdmin(page, server.url);

    // --- competitors, through the real form ---------------------------------------------------------
    const competitorIds = new Map<string, string>();
    for (const [i, payload] of payloads.entries()) {
      await page.goto(`${server.url}/competitors/new`);
      await page.getByLabel('Name').fill(payload);
      await page.getByLabel('Segment').selectOption({ label: 'SMB' });
      await page.getByLabel('Threat').selectOption('high');
      await page.getByLabel('Headquarters').fill(payload);
      if (payload.startsWith('javascript:')) {
        // A javascript: address is refused, and the form comes back with the payload as inert text.
        await page.getByLabel('Website').fill(payload);
        await page.getByRole('button', { name: 'Add competitor' }).click();
        await expect(page.locator('#field-website-error')).toHaveText(
          'Website must be an http:// or https:// address.',
        );
        await expect(page.getByLabel('Name')).toHaveValue(payload);
        await expect(page.getByLabel('Website')).toHaveValue(payload);
        await expectInert(`form with error for ${payload}`);
        await page.getByLabel('Website').fill(`https://xss-${i}.example`);
      }
      await page.getByRole('button', { name: 'Add competitor' }).click();
      await expect(page).toHaveURL(/\/competitors\/[0-9a-f-]{36}$/);
      competitorIds.set(payload, new URL(page.url()).pathname.split('/').pop() ?? '');
      await expect(page.getByRole('heading', { level: 1 })).toHaveText(payload);
      await expect(page.getByText(`${payload} was added.`, { exact: true })).toBeVisible();
      await expectInert(`battlecard after adding ${payload}`);
    }

    // --- users, through the real form ----------------------------------------------------------------
    for (const [i, payload] of payloads.entries()) {
      await page.goto(`${server.url}/users/new`);
      await page.getByLabel('Email').fill(`xss-${i}@rivals.test`);
      await page.getByLabel('Name').fill(payload);
      await page.getByLabel('Role').selectOption('viewer');
      await page.getByLabel('Password').fill('xss-user-password-0123');
      await page.getByRole('button', { name: 'Add user' }).click();
      await expect(page).toHaveURL(`${server.url}/users`);
      await expect(page.getByText(`${payload} can now sign in as viewer.`, { exact: true })).toBeVisible();
      await expectInert(`users page after adding ${payload}`);
    }

    // --- the users list -----------------------------------------------------------------------------
    await page.goto(`${server.url}/users?perPage=100`);
    const userNames = await page.locator('tr[data-row-id] td[data-label="Name"]').allTextContents();
    for (const payload of payloads) expect(userNames).toContain(payload);
    await expectInert('users list');

    // --- the competitor table, every payload shown literally -----------------------------------------
    await page.goto(`${server.url}/competitors?perPage=100`);
    await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
    const names = await page.locator('tr[data-row-id] td[data-label="Name"]').allTextContents();
    for (const payload of payloads) {
      expect(names).toContain(payload);
      await expect(page.getByRole('link', { name: payload, exact: true })).toBeVisible();
    }
    await expect(page.getByText('<script>window.__xss=1</script>', { exact: true })).toBeVisible();
    await expectInert('competitor list');

    // --- the search box (live refresh), and the same search as a server-rendered address -------------
    const search = page.getByRole('searchbox');
    for (const payload of payloads) {
      await search.fill(payload);
      await expect.poll(() => new URL(page.url()).searchParams.get('search')).toBe(payload);
      const link = page.getByRole('link', { name: payload, exact: true });
      await expect(link).toBeVisible();
      // Every row shown matches the search: by name, or by a note (specs running beside this one on the
      // same server save these payloads as notes of demo competitors).
      const shown = await page
        .locator('tr[data-row-id]')
        .evaluateAll((rows) =>
          rows.map((row) =>
            [
              row.textContent ?? '',
              ...[...row.querySelectorAll('[data-value]')].map((e) => e.getAttribute('data-value') ?? ''),
            ].join(' '),
          ),
        );
      expect(shown.length).toBeGreaterThan(0);
      for (const row of shown) expect(row.toLowerCase()).toContain(payload.toLowerCase());
      await expectInert(`live search for ${payload}`);

      await page.reload();
      await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
      await expect(page.getByRole('searchbox')).toHaveValue(payload);
      await expect(page.getByRole('link', { name: payload, exact: true })).toBeVisible();
      await expectInert(`search page for ${payload}`);
    }
    // A search that matches nothing echoes the term in the empty state, as text.
    const nothing = '<img src=x onerror="window.__xss=1"> nothing';
    await page.goto(`${server.url}/competitors?search=${encodeURIComponent(nothing)}`);
    await expect(page.getByText(`No competitors match “${nothing}”.`, { exact: true })).toBeVisible();
    await expectInert('empty search result');

    // --- every battlecard -----------------------------------------------------------------------------
    for (const [payload, id] of competitorIds) {
      await page.goto(`${server.url}/competitors/${id}`);
      await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
      await expect(page).toHaveTitle(`${payload} · Rivals`);
      await expect(page.getByRole('heading', { level: 1 })).toHaveText(payload);
      await expect(page.locator('.battlecard__facts dd').nth(4)).toHaveText(payload);
      await expectInert(`battlecard of ${payload}`);
    }
    expect(csp.console).toEqual([]);

    // Leave the worker's server as the other specs expect it: only the demo competitors.
    const token = await page.locator('meta[name="csrf-token"]').getAttribute('content');
    for (const id of competitorIds.values()) {
      const response = await page.request.post(`${server.url}/competitors/${id}/delete`, {
        form: { _csrf: token ?? '' },
        maxRedirects: 0,
      });
      expect(response.status()).toBe(302);
    }
  });
});

test.describe('after sign-out', () => {
  test('Back does not show the signed-in page again: it asks the server, which sends it to sign-in', async ({
    page,
    server,
  }) => {
    await signInAsAdmin(page, server.url);
    await page.locator('[data-row-id] a[href^="/competitors/"]').first().click();
    await expect(page.getByRole('link', { name: 'History' })).toBeVisible();
    const card = page.url();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect(page).toHaveURL(/\/login$/);
    // A stored page (no `no-store`) was shown again as it was: the competitor, the user, the form token.
    await page.goBack();
    await expect(page).toHaveURL(`${server.url}/login?next=${encodeURIComponent(new URL(card).pathname)}`);
    await expect(page.getByRole('button', { name: 'Sign out' })).toHaveCount(0);
  });
});
