import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemActor } from '#events/envelope.ts';
import { withTransaction } from '#infra/db/database.ts';
import { allProjections } from '#projections/all-projections.ts';
import { rebuildProjections } from '#projections/rebuild/rebuild.ts';
import { foldedSearch } from '#projections/search-pages.ts';
import { userSearchText } from '#projections/user-list/user-list.queries.ts';
import { createAccount } from '#services/user/accounts.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { addCompetitorCommand, envelope } from '#tests/support/runtime-pieces.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';
import type { TestClient } from '#tests/support/test-client.ts';

/**
 * Text that looks the same is the same text (decision 0024): "é" typed as one character (NFC, most
 * keyboards) or as "e" + a combining accent (NFD: macOS file names, some PDFs and pastes) is stored as
 * NFC, so a search typed either way finds a name, a note or a user written the other way.
 */
const nfd = (s: string) => s.normalize('NFD');
const nfc = (s: string) => s.normalize('NFC');
const name = 'Crème Brûlée Café';
const note = 'Prix élevés à Zürich';
const displayName = 'Zoë Ångström';
/** Greek as it is written: a final ς, which upper-cases to the Σ a search in capitals types. */
const greekName = 'Οδος Partners';
const greekUser = 'Νίκος Παππάς';
/** Letters the name check reads as others (NFKC: Ⓐ is A, ﬁ is fi, ％ is %) and an invisible space. */
const lookalikes = 'Ⓐrrow ﬁnance 100％ Zero\u200bWidth';

describe.each(databaseBackends)('text typed in either Unicode form on %s', (backend) => {
  let app: TestApp;
  let admin: TestClient;
  const competitorId = randomUUID();
  /** A viewer account, created as the operator's `users:add` does. */
  const addViewer = (email: string, displayName: string) =>
    createAccount(
      app.db.pool,
      (command) =>
        app.runtime.route({
          commandId: randomUUID(),
          correlationId: 'test',
          actor: systemActor,
          at: new Date().toISOString(),
          command,
        }),
      { email, displayName, role: 'viewer', password: 'a-long-test-password' },
    );

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: false });
    const added = await app.runtime.route(envelope(addCompetitorCommand(nfd(name), { competitorId })));
    expect(added.status).toBe('accepted');
    const noted = await app.runtime.route(
      envelope({
        type: 'UpdateCompetitorNote',
        payload: { competitorId, column: 'pricing', value: nfd(note) },
      }),
    );
    expect(noted.status).toBe('accepted');
    const { outcome } = await addViewer('zoe@rivals.test', nfd(displayName));
    expect(outcome?.status).toBe('accepted');
    for (const other of [greekName, lookalikes])
      expect((await app.runtime.route(envelope(addCompetitorCommand(other)))).status).toBe('accepted');
    const greek = await addViewer('nikos@rivals.test', greekUser);
    expect(greek.outcome?.status).toBe('accepted');
    await app.runtime.store.notifyAppended();
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { rows } = await app.db.pool.query<{ n: number }>(
        `SELECT ((SELECT count(*) FROM competitor_list WHERE pricing <> '')
               + (SELECT count(*) FROM audit_log WHERE type = 'CompetitorNoteUpdated')
               + (SELECT count(*) FROM audit_log WHERE competitor_name IN ($1, $2))
               + (SELECT count(*) FROM user_list WHERE email IN ('zoe@rivals.test', 'nikos@rivals.test')))::int AS n`,
        [greekName, lookalikes],
      );
      if (Number(rows[0]?.n) >= 6) break;
      if (Date.now() > deadline) throw new Error('the changes never reached the read models');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    admin = await app.client('admin');
  });
  afterAll(async () => app?.close());

  const count = async (path: string, term: string) => {
    const response = await admin.get(`${path}?search=${encodeURIComponent(term)}&sort=&page=1&perPage=15`, {
      xhr: true,
    });
    expect(response.status, `${path} ${term}`).toBe(200);
    return response.text();
  };

  it('stores names, notes and display names as NFC, whichever form was typed', async () => {
    const competitor = await app.db.pool.query<{ name: string; pricing: string }>(
      'SELECT name, pricing FROM competitor_list WHERE id = $1',
      [competitorId],
    );
    expect(competitor.rows[0]).toEqual({ name: nfc(name), pricing: nfc(note) });
    const user = await app.db.pool.query<{ display_name: string }>(
      `SELECT display_name FROM user_list WHERE email = 'zoe@rivals.test'`,
    );
    expect(user.rows[0]?.display_name).toBe(nfc(displayName));
    const events = await app.db.pool.query<{ data: { name?: string; value?: string } }>(
      `SELECT data FROM events WHERE type IN ('CompetitorAdded', 'CompetitorNoteUpdated')
       AND data->>'competitorId' = $1 ORDER BY position`,
      [competitorId],
    );
    expect(events.rows.map((r) => r.data.name ?? r.data.value)).toEqual([nfc(name), nfc(note)]);
  });

  it('finds the name, the note and the user by a search typed in either form', async () => {
    for (const form of [nfc, nfd]) {
      for (const term of [name, 'brûlée', note, 'élevés']) {
        const page = await count('/competitors', form(term));
        expect(page, `${form.name} ${term}`).toMatch(/>1 competitor(<!-- -->)? · page 1 of 1</);
        expect(page).toContain(`>${nfc(name)}<`);
      }
      expect(await count('/audit', form('Brûlée')), form.name).toContain(nfc(name));
      expect(await count('/users', form('Ångström')), form.name).toContain(nfc(displayName));
    }
  });

  it('refuses a second competitor whose name differs only in case or accent form, beyond ASCII too', async () => {
    for (const [taken, again] of [
      [greekName, 'ΟΔΟΣ PARTNERS'],
      [greekName, 'οδοσ partners'],
      [name, nfd(name.toUpperCase())],
    ]) {
      const outcome = await app.runtime.route(envelope(addCompetitorCommand(again ?? '')));
      expect(outcome, `${taken} / ${again}`).toMatchObject({
        status: 'rejected',
        code: 'conflict',
        message: `A competitor named “${nfc(again ?? '')}” already exists.`,
      });
    }
  });

  it('finds Greek written with a final ς by a search in capitals, in lower case with σ, or as written', async () => {
    for (const term of ['ΟΔΟΣ', 'οδοσ', 'οδος', 'Οδος Partners', 'ΟΔΟΣ PARTNERS']) {
      const page = await count('/competitors', term);
      expect(page, term).toMatch(/>1 competitor(<!-- -->)? · page 1 of 1</);
      expect(page, term).toContain(`>${greekName}<`);
      expect(await count('/audit', term), term).toContain(greekName);
    }
    for (const term of ['ΠΑΠΠΆΣ', 'παππάσ', 'Παππάς'])
      expect(await count('/users', term), term).toContain(greekUser);
  });

  it('finds a name by the letters the name check reads in it, on both backends alike', async () => {
    for (const term of [
      'ⓐrrow',
      'Arrow',
      'ARROW',
      'finance',
      'ＦＩＮＡＮＣＥ',
      '100%',
      '100％',
      'ZeroWidth',
      'zero\u2060width',
    ]) {
      const page = await count('/competitors', term);
      expect(page, term).toMatch(/>1 competitor(<!-- -->)? · page 1 of 1</);
      expect(page, term).toContain(lookalikes);
      expect(await count('/audit', term), term).toContain(lookalikes);
    }
    // A fullwidth ％ or ＿ is a literal character, never a wildcard.
    for (const term of ['1％0', '10＿', 'Ⓐ％w'])
      expect(await count('/competitors', term), term).toMatch(/>0 competitors(<!-- -->)?</);
  });

  it("search_fold's shortcut for ASCII text gives what the whole folding gives", async () => {
    const ascii = Array.from({ length: 127 }, (_, i) => String.fromCharCode(i + 1)).join('');
    const texts = [ascii, `ACME Corp ${ascii}`, `${ascii}Ⓐ`, `ΟΔΟΣ ${ascii} Zero\u200bWidth`, lookalikes, ''];
    const { rows } = await app.db.pool.query<{ folded: string; whole: string; ascii: boolean }>(
      `SELECT search_fold(t) AS folded,
              regexp_replace(translate(lower(normalize(t, NFKC)), 'ς', 'σ'), '[\u00AD\u200B-\u200F]', '', 'g') AS whole,
              octet_length(t) = char_length(t) AS ascii
       FROM unnest($1::text[]) AS t`,
      [texts],
    );
    expect(rows.map((row) => row.ascii)).toEqual([true, true, false, false, false, true]);
    for (const row of rows) expect(row.folded).toBe(row.whole);
    expect(rows[1]?.folded.startsWith('acme corp ')).toBe(true);
  });

  it('a search of the users can use their trigram index: it folds by the expression the index holds', async () => {
    const plan = await withTransaction(app.db.pool, async (client) => {
      await client.query('SET LOCAL enable_seqscan = off');
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT id FROM user_list WHERE ${userSearchText} LIKE ${foldedSearch}`.replace(
          '$1',
          "'%zoë%'",
        ),
      );
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    });
    expect(plan).toContain('user_list_search');
  });

  it('stores a name recorded decomposed before text was composed as NFC once the projections are rebuilt', async () => {
    // As an install upgraded from before decision 0024 holds it: a rename recorded as typed, decomposed
    // (events are append-only, so it is appended as it was then, past the store's validation).
    const renamed = `${name} Bis`;
    await app.db.pool.query(
      `INSERT INTO events (stream, stream_version, type, schema_version, data, metadata, command_id)
       SELECT stream, (SELECT max(stream_version) + 1 FROM events WHERE stream = e.stream), 'CompetitorUpdated', 2,
              jsonb_set(data, '{name}', to_jsonb($1::text)), metadata, 'decomposed-rename'
       FROM events e WHERE type = 'CompetitorAdded' AND data->>'competitorId' = $2`,
      [nfd(renamed), competitorId],
    );
    await rebuildProjections(app.db, app.runtime.store, allProjections);
    const { rows } = await app.db.pool.query<{ name: string }>(
      'SELECT name FROM competitor_list WHERE id = $1',
      [competitorId],
    );
    expect(rows[0]?.name).toBe(nfc(renamed));
    expect(await count('/competitors', nfc('Brûlée Café Bis'))).toMatch(
      />1 competitor(<!-- -->)? · page 1 of 1</,
    );
    expect(await count('/audit', nfc('Brûlée Café Bis'))).toContain(nfc(renamed));
  });
});
