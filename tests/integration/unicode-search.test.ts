import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseBackends } from '#tests/support/environment.ts';
import { addCompetitorCommand, envelope } from '#tests/support/runtime-pieces.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';
import type { TestClient } from '#tests/support/test-client.ts';

/**
 * A search finds a name by itself, in any case, whatever its letters: the stored search text is
 * lower-cased by the database, and so is the search (JavaScript's `toLowerCase` differs for a final Σ
 * and for İ, so these names once could not be found by their own spelling).
 */
const names = ['ΟΔΟΣ Systems', 'İŞBANK Rival', 'Émile Ltd'];
const searches: [string, string][] = [
  ['ΟΔΟΣ Systems', 'ΟΔΟΣ Systems'],
  ['ΟΔΟΣ', 'ΟΔΟΣ Systems'],
  ['οδοσ', 'ΟΔΟΣ Systems'],
  ['İŞBANK', 'İŞBANK Rival'],
  ['İşbank', 'İŞBANK Rival'],
  ['işbank', 'İŞBANK Rival'],
  ['ÉMILE', 'Émile Ltd'],
  ['émile', 'Émile Ltd'],
];

describe.each(databaseBackends)('searching non-ASCII names on %s', (backend) => {
  let app: TestApp;
  let admin: TestClient;

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: false });
    for (const name of names)
      expect((await app.runtime.route(envelope(addCompetitorCommand(name)))).status).toBe('accepted');
    await app.runtime.store.notifyAppended();
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { rows } = await app.db.pool.query<{ n: number }>(
        `SELECT (SELECT count(*) FROM competitor_list) + (SELECT count(*) FROM audit_log
                 WHERE competitor_name = ANY($1::text[]))::int AS n`,
        [names],
      );
      if (Number(rows[0]?.n) >= names.length * 2) break;
      if (Date.now() > deadline) throw new Error('the competitors never reached the read models');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    admin = await app.client('admin');
  });
  afterAll(async () => app?.close());

  const search = async (path: string, term: string) => {
    const response = await admin.get(`${path}?search=${encodeURIComponent(term)}&sort=&page=1&perPage=15`, {
      xhr: true,
    });
    expect(response.status, `${path} ${term}`).toBe(200);
    return response.text();
  };

  it('finds each competitor by its own name, in any case, on /competitors and /audit', async () => {
    for (const [term, name] of searches) {
      const competitors = await search('/competitors', term);
      expect(competitors, term).toContain(`>${name}<`);
      for (const other of names.filter((n) => n !== name)) expect(competitors, term).not.toContain(other);
      expect(competitors, term).toMatch(/>1 competitor(<!-- -->)? · page 1 of 1</);
      expect(await search('/audit', term), term).toContain(name);
    }
  });
});
