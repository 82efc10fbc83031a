import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '#events/user/fields.ts';
import { can } from '#events/user/permissions.ts';
import { componentRegistry } from '#web/component-protocol/registry.server.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';
import type { TestClient } from '#tests/support/test-client.ts';

const calls = Object.entries(componentRegistry).flatMap(([component, definition]) => [
  ...Object.entries(definition.events).map(([name, call]) => ({
    component,
    kind: 'event' as const,
    name,
    action: call.action,
  })),
  ...Object.entries(definition.methods).map(([name, call]) => ({
    component,
    kind: 'method' as const,
    name,
    action: call.action,
  })),
]);

/** Every component event and method × every role: the permission table decides, the server enforces. */
describe.each(databaseBackends)('component calls × roles on %s', (backend) => {
  let app: TestApp;
  const clients = new Map<Role | 'signed-out', TestClient>();

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: false });
    for (const role of ['viewer', 'editor', 'admin'] as const) clients.set(role, await app.client(role));
    const anonymous = await app.client();
    await anonymous.get('/login');
    clients.set('signed-out', anonymous);
  });
  afterAll(async () => app.close());

  it('covers every registered call', () => {
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.map((c) => `${c.component}:${c.name}`)).toContain('competitor-notes:update-note');
  });

  for (const call of calls) {
    for (const who of ['signed-out', 'viewer', 'editor', 'admin'] as const) {
      const allowed = who !== 'signed-out' && can(who, call.action);
      it(`${who} → ${call.component} ${call.kind} ${call.name}: ${allowed ? 'allowed' : 'denied'}`, async () => {
        const before = (await app.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events'))
          .rows[0]?.n;
        // An invalid payload: an allowed caller gets to validation (400); a denied one never does.
        const response = await clients
          .get(who)!
          .postJson(`/components/${call.component}`, { [call.kind]: call.name, payload: {} });
        const expected = who === 'signed-out' ? 401 : allowed ? 400 : 403;
        expect(response.status).toBe(expected);
        const after = (await app.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events'))
          .rows[0]?.n;
        expect(after).toBe(before);
      });
    }
  }
});
