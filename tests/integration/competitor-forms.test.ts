import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { databaseBackends } from '#tests/support/environment.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';
import type { TestClient } from '#tests/support/test-client.ts';

const valid = {
  name: 'Globex Analytics',
  website: 'https://globex.example',
  segmentId: 'enterprise',
  threat: 'high',
  headquarters: 'Springfield',
};

const errorOf = (html: string, field: string) =>
  new RegExp(`id="field-${field}-error">([^<]*)<`).exec(html)?.[1];
/** A form body as a browser would send it, with its fields as given (a field may come twice). */
const postRaw = (client: TestClient, path: string, body: URLSearchParams) => {
  body.set('_csrf', client.csrfToken);
  return fetch(client.baseUrl + path, {
    method: 'POST',
    headers: {
      Cookie: client.cookieHeader(),
      Origin: client.origin,
      'Content-Type': 'application/x-www-form-urlencoded',
    },
    body,
    redirect: 'manual',
  });
};
const valueOf = (html: string, field: string) =>
  new RegExp(`name="${field}"[^>]*value="([^"]*)"`).exec(html)?.[1];

describe.each(databaseBackends)('competitor forms on %s', (backend) => {
  let app: TestApp;
  let editor: TestClient;

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: false });
    editor = await app.client('editor');
    await editor.get('/competitors/new');
  });
  afterAll(async () => app.close());

  it('adds a competitor and answers only once the list shows it (read-your-writes)', async () => {
    const response = await editor.postForm('/competitors/new', valid);
    expect(response.status).toBe(302);
    const location = response.headers.get('location') ?? '';
    expect(location).toMatch(/^\/competitors\/[0-9a-f-]{36}$/);
    // No waiting here: the very next read already has it.
    const card = await editor.get(location);
    expect(card.status).toBe(200);
    const html = await card.text();
    expect(html).toMatch(/<h1[^>]*>Globex Analytics<\/h1>/);
    expect(html).toContain('Globex Analytics was added.');
    const list = await (await editor.get('/competitors?search=globex&sort=&page=1&perPage=15')).text();
    expect(list).toContain('Globex Analytics');
  });

  it('re-renders invalid input with a message per field and keeps what was typed', async () => {
    await editor.get('/competitors/new');
    const typed = {
      name: ' ',
      website: 'javascript:alert(1)',
      segmentId: '',
      threat: 'extreme',
      headquarters: 'x'.repeat(121),
    };
    const response = await editor.postForm('/competitors/new', typed);
    expect(response.status).toBe(400);
    const html = await response.text();
    expect(errorOf(html, 'name')).toBe('Name is required.');
    expect(errorOf(html, 'website')).toBe('Website must be an http:// or https:// address.');
    expect(errorOf(html, 'segmentId')).toBe('Choose a segment.');
    expect(errorOf(html, 'threat')).toBe('Choose a threat level: low, medium or high.');
    expect(errorOf(html, 'headquarters')).toBe('Headquarters must be at most 120 characters.');
    expect(valueOf(html, 'website')).toBe('javascript:alert(1)');
    expect(html).toContain('aria-invalid="true"');
  });

  it('refuses text-direction controls in a name, website or headquarters (they reorder the text around them), nothing saved', async () => {
    const events = async () =>
      (await app.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]?.n;
    const before = await events();
    await editor.get('/competitors/new');
    const typed = {
      ...valid,
      // Shown as "Evil(SMB, low threat) proC" in the audit log's "Added …" line.
      name: 'Evil\u202eCorp',
      // Shown as a link reading "evil.example/#https://www.google.com".
      website: 'https://evil.example/#\u202emoc.elgoog.www//:sptth',
      headquarters: 'Paris\u2067',
    };
    const response = await editor.postForm('/competitors/new', typed);
    expect(response.status).toBe(400);
    const html = await response.text();
    for (const [field, label] of [
      ['name', 'Name'],
      ['website', 'Website'],
      ['headquarters', 'Headquarters'],
    ] as const)
      expect(errorOf(html, field)).toBe(
        `${label} cannot contain text-direction controls (such as U+202E, right-to-left override): they make the text around it read differently from what it is.`,
      );
    expect(await events()).toBe(before);
    // Right-to-left text itself is fine, with its marks.
    await editor.get('/competitors/new');
    const rtl = await editor.postForm('/competitors/new', { ...valid, name: 'שלום\u200f Analytics' });
    expect(rtl.status).toBe(302);
  });

  it('rejects a duplicate name, whatever its case, with a clear message and nothing saved', async () => {
    const before = (await app.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]
      ?.n;
    await editor.get('/competitors/new');
    const response = await editor.postForm('/competitors/new', { ...valid, name: 'GLOBEX analytics' });
    expect(response.status).toBe(409);
    const html = await response.text();
    expect(errorOf(html, 'name')).toBe('A competitor named “GLOBEX analytics” already exists.');
    expect(valueOf(html, 'name')).toBe('GLOBEX analytics');
    const after = (await app.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]
      ?.n;
    expect(after).toBe(before);
  });

  it('edits with the version the form was opened with, and refuses a stale form', async () => {
    const { rows } = await app.db.pool.query<{ id: string; version: number }>(
      `SELECT id, version FROM competitor_list WHERE name = 'Globex Analytics'`,
    );
    const { id, version } = rows[0] ?? { id: '', version: 0 };
    const form = await (await editor.get(`/competitors/${id}/edit`)).text();
    expect(valueOf(form, 'expectedVersion')).toBe(String(version));
    const saved = await editor.postForm(`/competitors/${id}/edit`, {
      ...valid,
      threat: 'low',
      expectedVersion: String(version),
    });
    expect(saved.status).toBe(302);
    expect(await (await editor.get(`/competitors/${id}`)).text()).toContain('badge--threat-low');
    await editor.get(`/competitors/${id}/edit`);
    const stale = await editor.postForm(`/competitors/${id}/edit`, {
      ...valid,
      threat: 'medium',
      expectedVersion: String(version),
    });
    expect(stale.status).toBe(409);
    // The newer save was this editor's own (another tab): it says so, and marks the field both changed.
    const html = await stale.text();
    expect(html).toContain(
      'You changed this competitor in another tab or window after you opened this form.',
    );
    expect(errorOf(html, 'threat')).toMatch(/^You changed this to “low” in another tab or window/);
  });

  it('says a saved edit is saved when reading it back for the notice fails (not "nothing was changed")', async () => {
    const { rows } = await app.db.pool.query<{ id: string; version: number }>(
      `SELECT id, version FROM competitor_list WHERE name = 'Globex Analytics'`,
    );
    const { id, version } = rows[0] ?? { id: '', version: 0 };
    await editor.get(`/competitors/${id}/edit`);
    // The connection drops right after the change is stored: the second read of this competitor in the
    // request (the first finds the form's competitor, the second is for the notice) fails.
    const pool = app.db.pool as unknown as { query(text: unknown, values?: unknown): Promise<unknown> };
    const query = pool.query.bind(pool);
    let reads = 0;
    const spy = vi
      .spyOn(pool, 'query')
      .mockImplementation((text, values) =>
        typeof text === 'string' && text.includes('FROM competitor_list WHERE id = $1') && ++reads === 2
          ? Promise.reject(new Error('Connection terminated unexpectedly'))
          : query(text, values),
      );
    let saved: Response;
    try {
      saved = await editor.postForm(`/competitors/${id}/edit`, {
        ...valid,
        headquarters: 'Shelbyville',
        expectedVersion: String(version),
      });
    } finally {
      spy.mockRestore();
    }
    expect(reads).toBe(2);
    expect(saved.status).toBe(302);
    expect(saved.headers.get('location')).toBe(`/competitors/${id}`);
    const card = await (await editor.get(`/competitors/${id}`)).text();
    expect(card).toContain('Globex Analytics was saved.');
    expect(card).toContain('Shelbyville');
  });

  it('an edit sent after the competitor was deleted comes back as an add form with what was typed, nothing saved', async () => {
    const added = await editor.postForm('/competitors/new', { ...valid, name: 'Deleted Meanwhile' });
    const id = (added.headers.get('location') ?? '').split('/').pop() ?? '';
    const form = await (await editor.get(`/competitors/${id}/edit`)).text();
    const admin = await app.client('admin');
    await admin.get('/competitors');
    expect((await admin.postForm(`/competitors/${id}/delete`, {})).status).toBe(302);
    const events = async () =>
      (await app.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]?.n;
    const before = await events();

    const typed = { ...valid, name: 'Deleted Meanwhile', headquarters: 'Typed while it went' };
    const sent = await editor.postForm(`/competitors/${id}/edit`, {
      ...typed,
      expectedVersion: valueOf(form, 'expectedVersion') ?? '',
      baseSegmentId: 'enterprise',
    });
    expect(sent.status).toBe(404);
    const html = await sent.text();
    expect(html).toContain(
      'This competitor was deleted while you were editing it, so nothing was saved. What you typed is below: add it again as a new competitor, or leave this page to discard it.',
    );
    expect(html).toContain('action="/competitors/new"');
    expect(valueOf(html, 'name')).toBe('Deleted Meanwhile');
    expect(valueOf(html, 'headquarters')).toBe('Typed while it went');
    expect(await events()).toBe(before);

    // Sent from there, it is added again.
    const again = await editor.postForm('/competitors/new', typed);
    expect(again.status).toBe(302);
    expect(await (await editor.get(again.headers.get('location') ?? '')).text()).toContain(
      'Typed while it went',
    );
  });

  it('an edit sent again after it was saved and the competitor deleted says it was saved, not "nothing was saved"', async () => {
    const added = await editor.postForm('/competitors/new', { ...valid, name: 'Saved Then Deleted' });
    const id = (added.headers.get('location') ?? '').split('/').pop() ?? '';
    const form = await (await editor.get(`/competitors/${id}/edit`)).text();
    const edit = {
      ...valid,
      name: 'Saved Then Deleted',
      headquarters: 'Saved first',
      expectedVersion: valueOf(form, 'expectedVersion') ?? '',
      baseSegmentId: 'enterprise',
      _idempotency_key: valueOf(form, '_idempotency_key') ?? '',
    };
    // The first sending is saved (its answer lost on the way, say); then an admin deletes the competitor.
    expect((await editor.postForm(`/competitors/${id}/edit`, edit)).status).toBe(302);
    const admin = await app.client('admin');
    await admin.get('/competitors');
    expect((await admin.postForm(`/competitors/${id}/delete`, {})).status).toBe(302);

    // The browser sends the same form again: the answer is the first one's, saved.
    const again = await editor.postForm(`/competitors/${id}/edit`, edit);
    expect(again.status).toBe(302);
    expect(again.headers.get('location')).toBe('/competitors');
    const list = await (await editor.get('/competitors')).text();
    expect(list).toContain('Your changes to Saved Then Deleted were saved, but it has since been deleted.');
    expect(list).not.toContain('nothing was saved');
  });

  it('deleting from a table opened before another admin deleted it says it was already deleted, by name', async () => {
    const added = await editor.postForm('/competitors/new', { ...valid, name: 'Deleted Twice Over' });
    const id = (added.headers.get('location') ?? '').split('/').pop() ?? '';
    const [first, second] = [await app.client('admin'), await app.client('admin')];
    await first.get('/competitors');
    await second.get('/competitors');
    const mine = await first.postForm(`/competitors/${id}/delete`, { _idempotency_key: randomUUID() });
    expect(mine.status).toBe(302);
    expect(await (await first.get('/competitors')).text()).toContain('Deleted Twice Over was deleted.');
    const late = await second.postForm(`/competitors/${id}/delete`, { _idempotency_key: randomUUID() });
    expect(late.status).toBe(302);
    expect(await (await second.get('/competitors')).text()).toContain(
      'Deleted Twice Over was already deleted.',
    );
    const { rows } = await app.db.pool.query(
      `SELECT 1 FROM events WHERE type = 'CompetitorDeleted' AND data->>'competitorId' = $1`,
      [id],
    );
    expect(rows).toHaveLength(1);
  });

  it('refuses a field sent twice instead of saving it as cleared, nothing saved, what was typed kept', async () => {
    const added = await editor.postForm('/competitors/new', { ...valid, name: 'Twice Sent' });
    const id = (added.headers.get('location') ?? '').split('/').pop() ?? '';
    const events = async () =>
      (await app.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]?.n;
    const before = await events();
    const message =
      'This field came more than once (or not as text), so nothing was saved. Reload the page and make your change again.';

    // The edit form, the headquarters twice (the same value): read as empty, it was saved as cleared.
    const form = await (await editor.get(`/competitors/${id}/edit`)).text();
    const body = new URLSearchParams({
      ...valid,
      name: 'Twice Sent',
      expectedVersion: valueOf(form, 'expectedVersion') ?? '',
      baseSegmentId: 'enterprise',
    });
    body.append('headquarters', valid.headquarters);
    const twice = await postRaw(editor, `/competitors/${id}/edit`, body);
    expect(twice.status).toBe(400);
    const html = await twice.text();
    expect(errorOf(html, 'headquarters')).toBe(message);
    expect(valueOf(html, 'headquarters')).toBe(valid.headquarters);
    expect(await (await editor.get(`/competitors/${id}`)).text()).toContain(valid.headquarters);

    // The add form, the website twice; and a JSON body whose name is not text.
    await editor.get('/competitors/new');
    const add = new URLSearchParams({ ...valid, name: 'Twice Added' });
    add.append('website', 'https://other.example');
    const added2 = await postRaw(editor, '/competitors/new', add);
    expect(added2.status).toBe(400);
    expect(errorOf(await added2.text(), 'website')).toBe(message);
    await editor.get('/competitors/new');
    const json = await editor.postJson('/competitors/new', { ...valid, name: 42 }, { xhr: false });
    expect(json.status).toBe(400);
    expect(errorOf(await json.text(), 'name')).toBe(message);
    expect(await events()).toBe(before);
  });

  it('refuses an edit without the version its form was opened at, and stores nothing', async () => {
    const { rows } = await app.db.pool.query<{ id: string }>(
      `SELECT id FROM competitor_list WHERE name = 'Globex Analytics'`,
    );
    const id = rows[0]?.id ?? '';
    const before = (await app.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]
      ?.n;
    for (const version of [undefined, '']) {
      await editor.get(`/competitors/${id}/edit`);
      const sent = {
        ...valid,
        threat: 'high',
        ...(version === undefined ? {} : { expectedVersion: version }),
      };
      const refused = await editor.postForm(`/competitors/${id}/edit`, sent);
      expect(refused.status, JSON.stringify(version)).toBe(400);
      expect(await refused.text()).toContain('This form is damaged or out of date. Reload the page');
    }
    const after = (await app.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]
      ?.n;
    expect(after).toBe(before);
  });

  it('a viewer can read but not add, edit or delete', async () => {
    const viewer = await app.client('viewer');
    expect((await viewer.get('/competitors/new')).status).toBe(403);
    const page = await (await viewer.get('/competitors')).text();
    expect(page).not.toContain('Add competitor');
    expect(page).not.toContain('/delete');
  });

  it('a change whose outcome does not come back in time is called received, not saved, on every form', async () => {
    // The worker's answer is lost on the way back (a slow or restarting worker): the command itself is
    // dispatched for real and stored, only the request stops waiting for it.
    const { gateway } = app.runtime;
    const dispatch = gateway.dispatch.bind(gateway);
    const lost = vi
      .spyOn(gateway, 'dispatch')
      .mockImplementation(async (...args) => ({ ...(await dispatch(...args)), outcome: undefined }));
    const admin = await app.client('admin');
    try {
      const added = await editor.postForm('/competitors/new', { ...valid, name: 'Unconfirmed Inc' });
      expect(added.status).toBe(302);
      const list = await (await editor.get(added.headers.get('location') ?? '/')).text();
      expect(list).toContain('Your change was received but is not confirmed yet');
      // A request without an idempotency key (a script's): a resend would be a new change.
      expect(list).toContain('this request carried no Idempotency-Key, so a resend is a new change');
      expect(list).not.toContain('Unconfirmed Inc was added.');

      await admin.get('/users');
      const { rows } = await app.db.pool.query<{ id: string }>(
        "SELECT id FROM user_list WHERE role = 'viewer' LIMIT 1",
      );
      // The page's form carries a key: sending it again is the same change.
      const disabled = await admin.postForm(`/users/${rows[0]?.id}/disable`, {
        _idempotency_key: randomUUID(),
      });
      const users = await (await admin.get(disabled.headers.get('location') ?? '/')).text();
      expect(users).toContain('Your change was received but is not confirmed yet');
      expect(users).toContain('sending it again is safe, it is never made twice');
      expect(users).not.toMatch(/is disabled\./);
    } finally {
      lost.mockRestore();
    }
  });

  // Last: it stops the projections of this app.
  it('says the change is saved when the list does not show it within the bounded wait', async () => {
    await app.runtime.runner?.stop();
    await editor.get('/competitors/new');
    // What happened, in order: the answer must come after one visibility wait that gave up.
    const happened: string[] = [];
    const { watcher } = app.runtime;
    const waitFor = watcher.waitFor.bind(watcher);
    const wait = vi.spyOn(watcher, 'waitFor').mockImplementation(async (...args) => {
      const reached = await waitFor(...args);
      happened.push(reached ? 'visible' : 'wait gave up');
      return reached;
    });
    const response = await editor.postForm('/competitors/new', { ...valid, name: 'Slowpoke Systems' });
    happened.push('answered');
    wait.mockRestore();
    expect(happened).toEqual(['wait gave up', 'answered']);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/competitors');
    const html = await (await editor.get('/competitors')).text();
    expect(html).toContain('Slowpoke Systems was added. It is saved; the list will show it in a moment.');
    const { rows } = await app.db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events WHERE type = 'CompetitorAdded' AND data->>'name' = 'Slowpoke Systems'`,
    );
    expect(rows[0]?.n).toBe(1);
  });
});
