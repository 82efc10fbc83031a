import type { Browser, Page } from '@playwright/test';
import { deleteCompetitor } from './competitors.ts';
import { signIn } from './sign-in.ts';

/**
 * Alice and Bob, each signed in in a browser of their own; the competitors the test lists in `ids` are
 * deleted afterwards, whatever happens, so other specs sharing the server keep their data.
 */
export async function withTwoSignedIn(
  browser: Browser,
  url: string,
  body: (a: Page, b: Page, ids: string[]) => Promise<void>,
): Promise<void> {
  const alice = await browser.newContext();
  const bob = await browser.newContext();
  const ids: string[] = [];
  try {
    const a = await alice.newPage();
    const b = await bob.newPage();
    await signIn(a, url);
    await signIn(b, url);
    await body(a, b, ids);
  } finally {
    const a = alice.pages()[0];
    if (a) for (const id of ids) await deleteCompetitor(a, url, id);
    await alice.close();
    await bob.close();
  }
}
