import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_PASSWORD } from '#tests/support/test-app.ts';
import { TestClient } from '#tests/support/test-client.ts';
import { addCompetitorByForm, competitorForm, eventCount, messageOf, waitFor } from './support/helpers.ts';
import { securityBackends, startSecuritySuite, type SecurityApp } from './support/security-app.ts';

/**
 * Repros of a review of the write path, on both backends: bytes the database refuses in fields that
 * skipped the text check, a key sent again with a different request, a delete answered from another
 * request's outcome, a refused "add user" that cost an existing user their password, look-alike names,
 * and bodies or fields answered with advice nobody could act on.
 */
describe.each(securityBackends)('write path review on %s', (backend) => {
  let app: SecurityApp;
  let admin: TestClient;
  let editor: TestClient;

  beforeAll(async () => ({ app, admin, editor } = await startSecuritySuite(backend)));
  afterAll(() => app?.close());

  const addCompetitor = (name: string) => addCompetitorByForm(editor, name);

  const liveNamed = async (name: string) =>
    (await app.db.pool.query('SELECT id FROM competitor_list WHERE name = $1', [name])).rows.length;

  it('a NUL or half a character in a board group or a form base segment answers 400, nothing stored', async () => {
    const before = await eventCount(app, 'SegmentsReorganized');
    await editor.get('/segments');
    for (const value of ['a\u0000b', 'a\ud800', 'Enterprise', '']) {
      const response = await editor.postJson('/components/segments', {
        method: 'reorganize',
        payload: [{ order: 1, value, items: [] }],
      });
      expect(response.status, JSON.stringify(value)).toBe(400);
      expect(await messageOf(response)).toBe('Each group value must be a segment id.');
    }
    expect(await eventCount(app, 'SegmentsReorganized')).toBe(before);

    const id = await addCompetitor(`Base ${randomUUID().slice(0, 6)}`);
    await editor.get(`/competitors/${id}/edit`);
    const edited = await editor.postForm(`/competitors/${id}/edit`, {
      ...competitorForm('Renamed by a broken form'),
      expectedVersion: '1',
      baseSegmentId: 'x\u0000',
    });
    expect(edited.status).toBe(400);
    expect(await messageOf(edited)).toMatch(/damaged or out of date/);
    expect(await liveNamed('Renamed by a broken form')).toBe(0);
  });

  it('a key sent again with a different request is refused, and the first request stands alone', async () => {
    const id = await addCompetitor(`Keyed ${randomUUID().slice(0, 6)}`);
    const key = randomUUID();
    const note = async (value: string, column = 'general') => {
      await editor.get('/competitors');
      return editor.postJson(
        '/components/competitor-notes',
        { event: 'update-note', payload: { competitorId: id, column, value } },
        { headers: { 'Idempotency-Key': key } },
      );
    };
    const notes = await eventCount(app, 'CompetitorNoteUpdated');
    expect((await note('first payload')).status).toBe(200);
    const again = await note('first payload');
    expect(again.status).toBe(200);
    for (const [value, column] of [
      ['second payload', 'general'],
      ['first payload', 'pricing'],
    ] as const) {
      const other = await note(value, column);
      expect(other.status, `${column}: ${value}`).toBe(409);
      expect(await messageOf(other)).toMatch(/already used for a different change/);
    }
    expect(await eventCount(app, 'CompetitorNoteUpdated')).toBe(notes + 1);
    const { rows } = await app.db.pool.query<{ general: string; pricing: string }>(
      'SELECT general, pricing FROM competitor_list WHERE id = $1',
      [id],
    );
    expect(rows[0]).toMatchObject({ general: 'first payload', pricing: '' });

    // Forms too: the same hidden key with another name adds nothing and says so.
    const formKey = randomUUID();
    const alpha = `Alpha ${randomUUID().slice(0, 6)}`;
    const bravo = `Bravo ${randomUUID().slice(0, 6)}`;
    await editor.get('/competitors/new');
    expect((await editor.postForm('/competitors/new', competitorForm(alpha, formKey))).status).toBe(302);
    await editor.get('/competitors/new');
    const reused = await editor.postForm('/competitors/new', competitorForm(bravo, formKey));
    expect(reused.status).toBe(409);
    expect(await messageOf(reused)).toMatch(/already used for a different change/);
    expect([await liveNamed(alpha), await liveNamed(bravo)]).toEqual([1, 0]);
  });

  it("a delete is answered from its own outcome only: another request's key deletes nothing and says so", async () => {
    const target = await addCompetitor(`Target ${randomUUID().slice(0, 6)}`);
    const noted = await addCompetitor(`Noted ${randomUUID().slice(0, 6)}`);
    const key = randomUUID();
    await admin.get('/competitors');
    const noteAnswer = await admin.postJson(
      '/components/competitor-notes',
      { event: 'update-note', payload: { competitorId: noted, column: 'general', value: 'keyed' } },
      { headers: { 'Idempotency-Key': key } },
    );
    expect(noteAnswer.status).toBe(200);
    const deletes = await eventCount(app, 'CompetitorDeleted');

    for (const client of [admin, await secondAdmin()]) {
      await client.get('/competitors');
      const response = await client.postForm(`/competitors/${target}/delete`, { _idempotency_key: key });
      expect(response.status).toBe(302);
      const page = await client.get('/competitors');
      expect(await page.text()).not.toContain('was deleted.');
    }
    expect(await eventCount(app, 'CompetitorDeleted')).toBe(deletes);
    expect((await admin.get(`/competitors/${target}`)).status).toBe(200);

    // The same delete sent twice still deletes once and says so both times.
    const deleteKey = randomUUID();
    for (let i = 0; i < 2; i++) {
      await admin.get('/competitors');
      await admin.postForm(`/competitors/${target}/delete`, { _idempotency_key: deleteKey });
      expect(await (await admin.get('/competitors')).text()).toContain('was deleted.');
    }
    expect(await eventCount(app, 'CompetitorDeleted')).toBe(deletes + 1);
  });

  async function secondAdmin(): Promise<TestClient> {
    const email = `admin2-${randomUUID().slice(0, 6)}@rivals.test`;
    await admin.get('/users/new');
    const created = await admin.postForm('/users', {
      email,
      displayName: 'Second Admin',
      role: 'admin',
      password: TEST_PASSWORD,
      _idempotency_key: randomUUID(),
    });
    expect(created.status).toBe(302);
    const client = new TestClient(app.url);
    await waitFor(async () => {
      const { rows } = await app.db.pool.query('SELECT 1 FROM user_list WHERE email = $1', [email]);
      return rows.length > 0;
    }, 'the second admin in the user list');
    await client.signIn(email, TEST_PASSWORD);
    return client;
  }

  it("a refused add-user whose key names an existing user leaves that user's password alone", async () => {
    const victimKey = randomUUID();
    const victim = `victim-${randomUUID().slice(0, 6)}@rivals.test`;
    const form = (email: string, key: string) => ({
      email,
      displayName: 'Someone',
      role: 'viewer',
      password: TEST_PASSWORD,
      _idempotency_key: key,
    });
    await admin.get('/users/new');
    expect((await admin.postForm('/users', form(victim, victimKey))).status).toBe(302);
    await admin.get('/users/new');
    const other = `other-${randomUUID().slice(0, 6)}@rivals.test`;
    const refused = await admin.postForm('/users', form(other, victimKey));
    expect(refused.status).toBe(400);
    expect(await messageOf(refused)).toMatch(/already used for a different change/);
    const signIn = new TestClient(app.url);
    await signIn.get('/login');
    expect((await signIn.postForm('/login', { email: victim, password: TEST_PASSWORD })).status).toBe(302);
    const { rows } = await app.db.pool.query('SELECT 1 FROM user_list WHERE email = $1', [other]);
    expect(rows).toHaveLength(0);
  });

  it('names that look the same are the same name', async () => {
    const base = `Zeta ${randomUUID().slice(0, 4)}`;
    await addCompetitor(`${base} Caf\u00e9`);
    for (const lookalike of [
      `${base} Cafe\u0301`, // e + combining acute accent
      `${base.replace(' ', ' \u200b')} Caf\u00e9`, // a zero-width space
      `${base}  CAF\u00c9`, // two spaces, upper case
      `${base} Caf\uff45\u0301`, // a fullwidth e
    ]) {
      await editor.get('/competitors/new');
      const response = await editor.postForm('/competitors/new', competitorForm(lookalike));
      expect(response.status, JSON.stringify(lookalike)).toBe(409);
      expect(await messageOf(response)).toMatch(/already exists/);
    }
  });

  it('bodies and fields nobody could fix by reloading get an answer that says what to send', async () => {
    await editor.get('/competitors/new');
    const multipart = new FormData();
    multipart.set('name', 'Multipart Corp');
    multipart.set('_csrf', editor.csrfToken);
    const uploaded = await fetch(`${app.url}/competitors/new`, {
      method: 'POST',
      headers: { Cookie: editor.cookieHeader(), Origin: app.url },
      body: multipart,
      redirect: 'manual',
    });
    expect(uploaded.status).toBe(415);
    expect(await messageOf(uploaded)).toMatch(/application\/x-www-form-urlencoded/);

    /** A component call from the signed-in editor with a body of the given type. */
    const callAs = (contentType: string, body: string) =>
      fetch(`${app.url}/components/competitor-notes`, {
        method: 'POST',
        headers: {
          Cookie: editor.cookieHeader(),
          Origin: app.url,
          'X-Requested-With': 'XMLHttpRequest',
          'X-CSRF-Token': editor.csrfToken,
          'Content-Type': contentType,
        },
        body,
      });
    expect((await callAs('text/plain', '{"event":"update-note"}')).status).toBe(415);
    await editor.get('/competitors');
    const formCall = await callAs('application/x-www-form-urlencoded', 'event=update-note');
    expect(formCall.status).toBe(415);
    expect(await messageOf(formCall)).toMatch(/must be sent as JSON/);

    const noPayload = await editor.postJson('/components/competitor-notes', { event: 'update-note' });
    expect(noPayload.status).toBe(400);
    expect(await messageOf(noPayload)).toMatch(/needs its "payload" field/);

    const { rows } = await app.db.pool.query<{ id: string }>('SELECT id FROM competitor_list LIMIT 1');
    await admin.get('/ranking');
    for (const expect_ of ['abc', String(2 ** 60), '1e400']) {
      const moved = await admin.postForm('/ranking/move', { move: `${rows[0]?.id}:down`, expect: expect_ });
      expect(moved.status, expect_).toBe(400);
      expect(await messageOf(moved)).toMatch(/This page is out of date/);
    }

    const id = await addCompetitor(`Versioned ${randomUUID().slice(0, 6)}`);
    for (const expectedVersion of ['abc', '1e400', '-1']) {
      await editor.get(`/competitors/${id}/edit`);
      const edited = await editor.postForm(`/competitors/${id}/edit`, {
        ...competitorForm('Saved blindly'),
        expectedVersion,
        baseSegmentId: 'smb',
      });
      expect(edited.status, expectedVersion).toBe(400);
      expect(await messageOf(edited)).toMatch(/damaged or out of date/);
    }
    expect(await liveNamed('Saved blindly')).toBe(0);
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
  });
});
