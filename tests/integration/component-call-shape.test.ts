import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseBackends } from '#tests/support/environment.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';
import type { TestClient } from '#tests/support/test-client.ts';

/**
 * A component call of the wrong shape (a list instead of the call's object; a list item or a group that is
 * null, a number, or has other fields) is answered 400 in words a person can act on, not in zod's own
 * ("Invalid input: expected object, received array", "Unrecognized key: \"x\"").
 */

type Answer = { message?: string; error?: { message?: string } };

describe.each(databaseBackends)('component calls of the wrong shape on %s', (backend) => {
  let app: TestApp;
  let editor: TestClient;

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: false });
    editor = await app.client('editor');
  });
  afterAll(async () => app?.close());

  const call = async (component: string, body: unknown) => {
    await editor.get('/ranking');
    const response = await editor.postJson(`/components/${component}`, body, {
      headers: { 'Idempotency-Key': crypto.randomUUID() },
    });
    const answer = (await response.json()) as Answer;
    return { status: response.status, message: answer.message ?? answer.error?.message ?? '' };
  };

  const item = { order: 1, value: '00000000-0000-4000-8000-000000000000' };

  it.each([
    [
      'ranking',
      [],
      /^A component call is a JSON object: \{"event" or "method", "payload", "expect", "view"\}/,
    ],
    ['ranking', [{ method: 'reorder', payload: [] }], /^A component call is a JSON object/],
    ['segments', ['reorganize'], /^A component call is a JSON object/],
    [
      'ranking',
      { method: 'reorder', payload: [null], expect: { version: 0 } },
      /^Each item must be an object \{order, value\}\.$/,
    ],
    [
      'ranking',
      { method: 'reorder', payload: [7], expect: { version: 0 } },
      /^Each item must be an object \{order, value\}\.$/,
    ],
    [
      'ranking',
      { method: 'reorder', payload: [{ ...item, rank: 1 }], expect: { version: 0 } },
      /^Each item has only order, value; "rank" is not one of them\.$/,
    ],
    [
      'segments',
      { method: 'reorganize', payload: [null], expect: { version: 0 } },
      /^Each group must be an object \{order, value, items\}\.$/,
    ],
    [
      'segments',
      { method: 'reorganize', payload: [{ order: 1, value: 'smb', items: [null] }], expect: { version: 0 } },
      /^Each item must be an object \{order, value\}\.$/,
    ],
    [
      'segments',
      {
        method: 'reorganize',
        payload: [{ order: 1, value: 'smb', items: [], name: 'SMB' }],
        expect: { version: 0 },
      },
      /^Each group has only order, value, items; "name" is not one of them\.$/,
    ],
  ])('/components/%s %j: 400, said in words', async (component, body, message) => {
    const { status, message: said } = await call(component, body);
    expect(status).toBe(400);
    expect(said).toMatch(message);
    expect(said).not.toMatch(/Invalid input|Unrecognized key/);
  });
});
