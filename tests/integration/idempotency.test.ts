import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { competitorStream } from '#events/streams.ts';
import { CHANGE_WAIT_MS } from '#web/commands.server.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { addCompetitorCommand, envelope } from '#tests/support/runtime-pieces.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';
import type { TestClient } from '#tests/support/test-client.ts';

/**
 * Exactly once from the click: the client's key becomes the command id, so the same request sent again
 * (a lost answer, a double submit) gets the first outcome and never makes a second event — for component
 * calls (Idempotency-Key header) and forms (hidden field) alike.
 */
describe.each(databaseBackends)('idempotency keys on %s', (backend) => {
  let app: TestApp;
  let editor: TestClient;
  let admin: TestClient;

  const NOTES = '/components/competitor-notes';

  async function eventCount(): Promise<number> {
    const { rows } = await app.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events');
    return rows[0]?.n ?? 0;
  }

  /** A fresh competitor, once the list shows it. */
  async function newCompetitor(): Promise<string> {
    const command = addCompetitorCommand(`Idem ${randomUUID().slice(0, 8)}`);
    expect((await app.runtime.route(envelope(command))).status).toBe('accepted');
    await app.runtime.store.notifyAppended();
    const id = command.payload.competitorId;
    for (let tries = 0; tries < 500; tries++) {
      const { rows } = await app.db.pool.query('SELECT 1 FROM competitor_list WHERE id = $1', [id]);
      if (rows.length > 0) return id;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('the new competitor never reached the list');
  }

  async function note(client: TestClient, competitorId: string, value: string, key?: string) {
    await client.get('/competitors');
    const response = await client.postJson(
      NOTES,
      { event: 'update-note', payload: { competitorId, column: 'general', value } },
      key ? { headers: { 'Idempotency-Key': key } } : {},
    );
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: false });
    editor = await app.client('editor');
    admin = await app.client('admin');
  });

  afterAll(async () => {
    await app.close();
  });

  it('the same component call sent three times appends one event and answers the same each time', async () => {
    const id = await newCompetitor();
    const key = randomUUID();
    const before = await eventCount();
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await note(editor, id, 'retried value', key));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(new Set(answers.map((a) => a.body.position)).size).toBe(1);
    expect(await eventCount()).toBe(before + 1);
    const { events } = await app.runtime.store.readStream(competitorStream(id));
    expect(events.filter((e) => e.type === 'CompetitorNoteUpdated')).toHaveLength(1);
    expect(events.at(-1)?.metadata.commandId).toBe(key);
  });

  it('a blind retry cannot erase a later change by someone else', async () => {
    const id = await newCompetitor();
    const key = randomUUID();
    await note(editor, id, 'V1', key);
    await note(admin, id, 'V2');
    // The editor's answer was lost; the browser resends V1 with the same key.
    const retry = await note(editor, id, 'V1', key);
    expect(retry.status).toBe(200);
    const { rows } = await app.db.pool.query<{ general: string }>(
      'SELECT general FROM competitor_list WHERE id = $1',
      [id],
    );
    expect(rows[0]?.general).toBe('V2');
  });

  it('concurrent sends of one key make one event', async () => {
    const id = await newCompetitor();
    const key = randomUUID();
    const before = await eventCount();
    const answers = await Promise.all(Array.from({ length: 5 }, () => note(editor, id, 'raced', key)));
    expect(answers.every((a) => a.status === 200 || a.status === 202)).toBe(true);
    expect(await eventCount()).toBe(before + 1);
  });

  it('concurrent sends of one key are each answered once it is handled, not at the end of the wait', async () => {
    const id = await newCompetitor();
    await editor.get('/competitors');
    const key = randomUUID();
    const send = async () => {
      const started = Date.now();
      const response = await editor.postJson(
        NOTES,
        { event: 'update-note', payload: { competitorId: id, column: 'general', value: 'double' } },
        { headers: { 'Idempotency-Key': key } },
      );
      const body = (await response.json()) as { status?: string };
      return { status: body.status, ms: Date.now() - started };
    };
    // Sent together, on one instance: the one that admitted the command waits for the worker's answer;
    // the others (a retry in flight) wait for that same answer.
    const answers = await Promise.all([send(), send(), send()]);
    expect(answers.map((a) => a.status)).toEqual(['accepted', 'accepted', 'accepted']);
    // The wait's budget is CHANGE_WAIT_MS (5 s); a handled note is answered in well under that.
    expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(CHANGE_WAIT_MS - 1_000);
  });

  it('a form or call sent again after its sender lost the right to send it gets the first answer, not 403', async () => {
    // A second admin, who makes themselves an editor: the answer is lost, the browser sends it again.
    const promoted = await app.runtime.route(
      envelope({ type: 'ChangeUserRole', payload: { userId: app.userIds.viewer, role: 'admin' } }),
    );
    expect(promoted.status).toBe('accepted');
    await app.runtime.store.notifyAppended();
    let second: TestClient | undefined;
    for (let tries = 0; tries < 500 && !second; tries++) {
      const { rows } = await app.db.pool.query("SELECT 1 FROM user_list WHERE id = $1 AND role = 'admin'", [
        app.userIds.viewer,
      ]);
      if (rows.length > 0) second = await app.client('viewer');
      else await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (!second) throw new Error('the second admin never reached the user list');
    await second.get('/users');
    const demote = { role: 'editor', _idempotency_key: randomUUID() };
    const roleChanges = async () =>
      (await app.db.pool.query("SELECT 1 FROM events WHERE type = 'UserRoleChanged'")).rowCount ?? -1;
    const first = await second.postForm(`/users/${app.userIds.viewer}/role`, demote);
    expect([first.status, first.headers.get('location')]).toEqual([302, '/competitors']);
    const changes = await roleChanges();
    const again = await second.postForm(`/users/${app.userIds.viewer}/role`, demote);
    expect([again.status, again.headers.get('location')]).toEqual([302, '/competitors']);
    expect(await (await second.get('/competitors')).text()).toContain('is now editor.');
    expect(await roleChanges()).toBe(changes);
    // A new request (a fresh key) is refused: they are an editor now.
    const fresh = await second.postForm(`/users/${app.userIds.viewer}/role`, {
      role: 'admin',
      _idempotency_key: randomUUID(),
    });
    expect(fresh.status).toBe(403);

    // An editor's note whose answer was lost, sent again after an admin made them a viewer.
    const id = await newCompetitor();
    const key = randomUUID();
    const saved = await note(second, id, 'before the demotion', key);
    expect(saved.status).toBe(200);
    await admin.get('/users');
    await admin.postForm(`/users/${app.userIds.viewer}/role`, {
      role: 'viewer',
      _idempotency_key: randomUUID(),
    });
    const resent = await note(second, id, 'before the demotion', key);
    expect([resent.status, resent.body.status, resent.body.position]).toEqual([
      200,
      'accepted',
      saved.body.position,
    ]);
    expect((await note(second, id, 'a new note', randomUUID())).status).toBe(403);
  });

  it("another user's key is refused and changes nothing", async () => {
    const id = await newCompetitor();
    const key = randomUUID();
    await note(editor, id, 'mine', key);
    const before = await eventCount();
    const stolen = await note(admin, id, 'theirs', key);
    expect(stolen.status).toBe(409);
    expect(String(stolen.body.message)).toMatch(/another request/);
    expect(await eventCount()).toBe(before);
  });

  it('a malformed key is refused with a message naming the header', async () => {
    const id = await newCompetitor();
    const before = await eventCount();
    const answer = await note(editor, id, 'x', 'not-a-uuid');
    expect(answer.status).toBe(400);
    expect(JSON.stringify(answer.body)).toMatch(/Idempotency-Key must be a UUID/);
    expect(await eventCount()).toBe(before);
  });

  it('a form whose key came twice (or not as text) is refused, not made without its protection', async () => {
    const id = await newCompetitor();
    await admin.get('/competitors');
    const key = randomUUID();
    const before = await eventCount();
    const twice = await admin.postForm(`/competitors/${id}/delete`, [
      ['_idempotency_key', key],
      ['_idempotency_key', key],
    ]);
    expect(twice.status).toBe(400);
    expect(await twice.text()).toContain(
      '_idempotency_key came more than once (or not as text), so nothing was done',
    );
    const notText = await admin.postJson(`/competitors/${id}/delete`, { _idempotency_key: 7 });
    expect(notText.status).toBe(400);
    expect(JSON.stringify(await notText.json())).toContain('came more than once (or not as text)');
    expect(await eventCount()).toBe(before);
    const { rows } = await app.db.pool.query('SELECT 1 FROM competitor_list WHERE id = $1', [id]);
    expect(rows).toHaveLength(1);
  });

  it('a form submitted twice with its hidden key adds one competitor and lands on it both times', async () => {
    const form = await editor.get('/competitors/new');
    const html = await form.text();
    const key = /name="_idempotency_key" value="([^"]+)"/.exec(html)?.[1];
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    const name = `Twice ${randomUUID().slice(0, 8)}`;
    const fields = {
      name,
      website: '',
      segmentId: 'smb',
      threat: 'high',
      headquarters: '',
      _idempotency_key: key ?? '',
    };
    const first = await editor.postForm('/competitors/new', fields);
    const second = await editor.postForm('/competitors/new', fields);
    expect(first.status).toBe(302);
    expect(second.status).toBe(302);
    expect(second.headers.get('location')).toBe(first.headers.get('location'));
    const { rows } = await app.db.pool.query('SELECT id FROM competitor_list WHERE name = $1', [name]);
    expect(rows).toHaveLength(1);
  });

  it('a delete form submitted twice deletes once', async () => {
    const id = await newCompetitor();
    await admin.get('/competitors');
    const key = randomUUID();
    const first = await admin.postForm(`/competitors/${id}/delete`, { _idempotency_key: key });
    const second = await admin.postForm(`/competitors/${id}/delete`, { _idempotency_key: key });
    expect(first.status).toBe(302);
    expect(second.status).toBe(302);
    const { events } = await app.runtime.store.readStream(competitorStream(id));
    expect(events.filter((e) => e.type === 'CompetitorDeleted')).toHaveLength(1);
  });

  it('every rendered form carries a fresh key', async () => {
    const keys = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const html = await (await editor.get('/competitors/new')).text();
      const key = /name="_idempotency_key" value="([^"]+)"/.exec(html)?.[1];
      if (key) keys.add(key);
    }
    expect(keys.size).toBe(3);
  });
});
