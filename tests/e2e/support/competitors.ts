import type { Page } from '@playwright/test';
import { expect } from './fixtures.ts';

/* Test setup through the real endpoints, as the page's signed-in user (the specs' UI steps go through the UI). */

export const csrfToken = async (page: Page) =>
  (await page.locator('meta[name="csrf-token"]').getAttribute('content')) ?? '';

/** Adds a competitor through the real form endpoint (as the page's signed-in user); returns its id. */
export async function addCompetitor(page: Page, baseUrl: string, name: string): Promise<string> {
  const response = await page.request.post(`${baseUrl}/competitors/new`, {
    form: {
      _csrf: await csrfToken(page),
      name,
      website: '',
      segmentId: 'smb',
      threat: 'medium',
      headquarters: '',
    },
    maxRedirects: 0,
  });
  expect(response.status()).toBe(302);
  const id = /\/competitors\/([0-9a-f-]{36})$/.exec(response.headers().location ?? '')?.[1];
  expect(id, response.headers().location).toBeTruthy();
  return id ?? '';
}

/** Sets a note through the component protocol (test setup; the dialog tests go through the UI). */
export async function putNote(
  page: Page,
  baseUrl: string,
  competitorId: string,
  column: string,
  value: string,
) {
  const response = await page.request.post(`${baseUrl}/components/competitor-notes`, {
    headers: { 'X-Requested-With': 'XMLHttpRequest', 'X-CSRF-Token': await csrfToken(page) },
    data: { event: 'update-note', payload: { competitorId, column, value } },
  });
  expect(response.status(), await response.text()).toBe(200);
  return (await response.json()) as { status: string; position: number | null; transactionId?: string };
}

export async function deleteCompetitor(page: Page, baseUrl: string, competitorId: string): Promise<void> {
  const response = await page.request.post(`${baseUrl}/competitors/${competitorId}/delete`, {
    form: { _csrf: await csrfToken(page) },
    maxRedirects: 0,
  });
  expect(response.status()).toBe(302);
}
