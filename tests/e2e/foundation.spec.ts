import type { Page } from '@playwright/test';
import { expect, test } from './support/fixtures.ts';
import { signIn } from './support/sign-in.ts';

/** Console errors, uncaught exceptions and CSP violations seen by a page. */
function watchForProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (message) => {
    const text = message.text();
    const where = message.location().url;
    // The browser asks for /favicon.ico on its own; the app serves none yet (a 404 is not our page failing).
    if (where && new URL(where).pathname === '/favicon.ico') return;
    if (message.type() === 'error') problems.push(`console error: ${text}${where ? ` (${where})` : ''}`);
    else if (/content security policy/i.test(text)) problems.push(`CSP ${message.type()}: ${text}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  return problems;
}

test.describe('competitors page (foundation)', () => {
  test('renders the demo rows, hydrates the toolbar island, and loads cleanly', async ({ page, server }) => {
    const problems = watchForProblems(page);
    // Report CSP violations directly too (an init script is not itself subject to the page's CSP).
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => {
        console.error(`CSP violation: ${event.violatedDirective} blocked ${event.blockedURI || 'inline'}`);
      });
    });

    // Signed out, the list sends you to sign in and back.
    await page.goto(`${server.url}/competitors`);
    await expect(page).toHaveURL(`${server.url}/login?next=%2Fcompetitors`);
    await signIn(page, server.url);
    const response = await page.goto(`${server.url}/competitors`);
    expect(response?.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe('/competitors');

    // (a) the six demo competitors, rendered on the server
    const rows = page.locator('tr[data-row-id]');
    await expect(rows).toHaveCount(6);
    await expect(page.getByRole('link', { name: 'Northwind Analytics', exact: true })).toBeVisible();

    // (b) the toolbar island hydrated and React handles its events
    await expect(page.locator('[data-island="table-toolbar"][data-hydrated="true"]')).toBeAttached();
    await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
    const search = page.getByRole('searchbox');
    const clear = page.getByRole('button', { name: 'Clear search' });
    await expect(clear).toHaveCount(0);
    await search.fill('xyz');
    await expect(clear).toBeVisible();
    // The debounced search refreshes the table in place: nothing matches "xyz".
    await expect(rows).toHaveCount(0);
    await clear.click();
    await expect(search).toHaveValue('');
    await expect(clear).toHaveCount(0);
    await expect(rows).toHaveCount(6);

    // (c) nothing went wrong in the browser
    expect(problems).toEqual([]);
  });

  test('sends a CSP nonce that matches the module script, and immutable asset caching', async ({
    request,
    server,
  }) => {
    const response = await request.get(`${server.url}/competitors`);
    expect(response.status()).toBe(200);
    const csp = response.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("'nonce-");
    const headerNonce = /'nonce-([^']+)'/.exec(csp)?.[1];

    const html = await response.text();
    const moduleScript = /<script\b[^>]*\btype="module"[^>]*>/.exec(html)?.[0] ?? '';
    const scriptNonce = /\bnonce="([^"]+)"/.exec(moduleScript)?.[1];
    expect(headerNonce).toBeTruthy();
    expect(scriptNonce).toBe(headerNonce);

    // A fresh nonce per response.
    const again = await request.get(`${server.url}/competitors`);
    expect(again.headers()['content-security-policy']).not.toContain(`'nonce-${headerNonce}'`);

    const scriptSrc = /\bsrc="([^"]+)"/.exec(moduleScript)?.[1];
    const stylesheet = /<link\b[^>]*\brel="stylesheet"[^>]*\bhref="([^"]+)"/.exec(html)?.[1];
    for (const asset of [scriptSrc, stylesheet]) {
      expect(asset).toMatch(/^\/assets\//);
      const assetResponse = await request.get(`${server.url}${asset}`);
      expect(assetResponse.status(), asset).toBe(200);
      expect(assetResponse.headers()['cache-control'], asset).toContain('immutable');
    }
  });
});
