import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseBackends } from '#tests/support/environment.ts';
import { addCompetitorCommand, envelope } from '#tests/support/runtime-pieces.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';
import type { TestClient } from '#tests/support/test-client.ts';

/**
 * The short path of a change (docs/change-path.md): a component call names the page it came from, and
 * once the change is visible the answer carries that page re-rendered — the page applies it without a
 * second request. Only a page the caller may see is rendered; a foreign address is refused; a change
 * that is not yet visible answers without HTML (the page waits for the live feed).
 */

const NOTES = '/components/competitor-notes';

interface Answer {
  status?: string;
  commandId?: string;
  visible?: boolean;
  position?: number | null;
  html?: string;
  error?: { message?: string };
}

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

describe.each(databaseBackends)('component answers carry the page on %s', (backend) => {
  let app: TestApp;
  let editor: TestClient;

  const eventCount = async () =>
    (await app.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]?.n ?? -1;

  async function newCompetitor(name: string): Promise<string> {
    const command = addCompetitorCommand(name);
    expect((await app.runtime.route(envelope(command))).status).toBe('accepted');
    const id = command.payload.competitorId;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(20)) {
      const { rows } = await app.db.pool.query('SELECT 1 FROM competitor_list WHERE id = $1', [id]);
      if (rows.length > 0) return id;
    }
    throw new Error(`${name} did not appear in the list`);
  }

  async function saveNote(competitorId: string, value: string, view?: string, key = randomUUID()) {
    await editor.get('/competitors');
    const response = await editor.postJson(
      NOTES,
      { event: 'update-note', payload: { competitorId, column: 'pricing', value }, view },
      { headers: { 'Idempotency-Key': key } },
    );
    return { status: response.status, answer: (await response.json()) as Answer };
  }

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: false });
    editor = await app.client('editor');
  });
  afterAll(async () => app?.close());

  it('answers a note saved on the list with the list region as that page shows it, with the note', async () => {
    const name = `Answer ${randomUUID().slice(0, 8)}`;
    const id = await newCompetitor(name);
    const value = `Seat pricing <b>${randomUUID()}</b> & "more"`;
    const key = randomUUID();
    const view = `/competitors?search=${encodeURIComponent(name)}&sort=name:desc&page=1&perPage=15`;
    const { status, answer } = await saveNote(id, value, view, key);
    expect(status).toBe(200);
    expect(answer).toMatchObject({ status: 'accepted', visible: true, commandId: key });
    const html = answer.html ?? '';
    // The table fragment (what the table's own refresh gets), for that search and sort, with the new note.
    expect(html).toContain('data-table-region');
    expect(html).not.toContain('<nav');
    expect(html).toContain(escapeHtml(value));
    expect(html).not.toContain(value);
    expect(html).toContain(`&quot;search&quot;:&quot;${name}&quot;`);
    expect(html).toContain('&quot;sort&quot;:&quot;name:desc&quot;');
    // It is exactly what a GET of that page answers now.
    const fresh = await (await editor.get(view, { xhr: true })).text();
    expect(html).toBe(fresh);
  });

  it('answers a note saved on the battlecard with the battlecard', async () => {
    const id = await newCompetitor(`Card ${randomUUID().slice(0, 8)}`);
    const value = `Card note ${randomUUID()}`;
    const { answer } = await saveNote(id, value, `/competitors/${id}`);
    expect(answer.status).toBe('accepted');
    expect(answer.html).toContain('id="battlecard"');
    expect(answer.html).toContain(value);
  });

  it('carries no page the caller may not see, no page that is not a page, and none when no view is named', async () => {
    const id = await newCompetitor(`Views ${randomUUID().slice(0, 8)}`);
    for (const view of ['/users', '/live/position', '/nowhere', `/competitors/${randomUUID()}`, undefined]) {
      const { status, answer } = await saveNote(id, `Note for ${String(view)} ${randomUUID()}`, view);
      expect(status).toBe(200);
      expect(answer).toMatchObject({ status: 'accepted', visible: true });
      expect(answer.html).toBeUndefined();
    }
  });

  it('refuses a view that is not a path on this site, and saves nothing', async () => {
    const id = await newCompetitor(`Foreign ${randomUUID().slice(0, 8)}`);
    for (const view of ['//evil.example/x', 'https://evil.example/', 'competitors', '/a\\b', '/x y']) {
      const before = await eventCount();
      const { status, answer } = await saveNote(id, 'Not saved', view);
      expect(status).toBe(400);
      expect(answer.error?.message ?? '').toMatch(/view must be a path on this site/i);
      expect(await eventCount()).toBe(before);
    }
  });

  // Last: it stops the projections of this app.
  it('answers a saved change that is not visible yet without a page, saying it is not visible', async () => {
    const id = await newCompetitor(`Slow ${randomUUID().slice(0, 8)}`);
    await app.runtime.runner?.stop();
    const before = await eventCount();
    const { status, answer } = await saveNote(id, `Slow note ${randomUUID()}`, '/competitors');
    expect(status).toBe(200);
    expect(answer).toMatchObject({ status: 'accepted', visible: false });
    expect(answer.html).toBeUndefined();
    expect(await eventCount()).toBe(before + 1);
  });
});
