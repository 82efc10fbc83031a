import { randomUUID } from 'node:crypto';
import { test as base, expect } from '@playwright/test';
import pg from 'pg';
import { runs } from '#tests/support/environment.ts';
import { addCompetitor } from './support/competitors.ts';
import { signIn } from './support/sign-in.ts';
import type { RunningServer } from './support/server.ts';
import { serverFixtureWith } from './support/fixtures.ts';

/**
 * A change the workers give up on (it failed on every delivery, and waits in /ops's dead letters) as the
 * person who made it meets it in the notes dialog. On Postgres, where a test can make the server's own
 * database refuse one change (a trigger on the log); the bus redelivers a failed command after
 * BUS_CLAIM_IDLE_MS, shortened here so five deliveries take seconds, not minutes.
 */
const test = base.extend<object, { server: RunningServer }>({
  server: serverFixtureWith({ backend: 'postgres', env: { BUS_CLAIM_IDLE_MS: '400' } }),
});

test.skip(!runs('postgres'), 'RIVALS_TEST_SKIP leaves out Postgres');

const NOTES = '/components/competitor-notes';

test('a note the server set aside after failing on it says so, and Save again is a new attempt that saves it', async ({
  page,
  server,
}) => {
  const stamp = randomUUID().slice(0, 8);
  const text = `Refused by the log ${stamp}`;
  const pool = new pg.Pool({ connectionString: server.databaseUrl, max: 1 });
  // The log refuses this one text (a stand-in for a bug that fails a command every time it is handled).
  await pool.query(`
    CREATE OR REPLACE FUNCTION refuse_text_${stamp}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.data::text LIKE '%${text}%' THEN RAISE EXCEPTION 'refused for the test'; END IF;
      RETURN NEW;
    END $$`);
  await pool.query(
    `CREATE TRIGGER refuse_text_${stamp} BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION refuse_text_${stamp}()`,
  );
  const allowAgain = () => pool.query(`DROP TRIGGER IF EXISTS refuse_text_${stamp} ON events`);
  try {
    await signIn(page, server.url);
    const name = `Set aside ${stamp}`;
    const id = await addCompetitor(page, server.url, name);
    await page.goto(`${server.url}/competitors?search=${encodeURIComponent(name)}`);
    await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
    const keys: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && new URL(r.url()).pathname === NOTES)
        keys.push(r.headers()['idempotency-key'] ?? '');
    });

    const pricing = page.locator(`tr[data-row-id="${id}"] button[data-note][data-column="pricing"]`);
    await pricing.click();
    const dialog = page.getByRole('dialog');
    await dialog.locator('textarea').fill(text);
    const save = dialog.getByRole('button', { name: 'Save', exact: true });
    const said = dialog.locator('.swal2-validation-message');
    // Saved again while the workers still try ("received but not confirmed yet"), until they give up.
    await expect(async () => {
      if (await save.isEnabled()) await save.click();
      await expect(said).toContainText('set it aside for an administrator', { timeout: 3_000 });
    }).toPass({ timeout: 90_000 });
    await expect(said).toContainText('Nothing was changed. You can try again.');
    await expect(dialog).toBeVisible();
    // Every attempt so far was the one change, under one key.
    expect(new Set(keys).size).toBe(1);
    await expect(pricing).toHaveAttribute('data-version', '0');

    // Whatever failed is fixed; the user tries again: a new change, under a new key, and it saves.
    await allowAgain();
    await save.click();
    await expect(dialog).toBeHidden({ timeout: 15_000 });
    await expect(page.getByRole('status').filter({ hasText: 'Saved the pricing note.' })).toBeVisible();
    await expect(pricing).toHaveAttribute('data-value', text);
    await expect(pricing).toHaveAttribute('data-version', '1');
    expect(new Set(keys).size).toBe(2);
    expect(keys.at(-1)).not.toBe(keys[0]);
  } finally {
    await allowAgain().catch(() => undefined);
    await pool.query(`DROP FUNCTION IF EXISTS refuse_text_${stamp}()`).catch(() => undefined);
    await pool.end();
  }
});
