import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstanceHeartbeat } from '#infra/instances.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { addCompetitorCommand, silentLog } from '#tests/support/runtime-pieces.ts';
import { startTestApp, testEmails, TEST_PASSWORD, type TestApp } from '#tests/support/test-app.ts';
import { TestClient } from '#tests/support/test-client.ts';
import { until } from '#tests/support/until.ts';

/**
 * Every path that writes to the database tells `/readyz` ("database (writes)") when the database refuses
 * its writes for a reason of its own (decision 0012). The refusal is the database's: a trigger on one
 * table raises SQLSTATE 53100 (disk_full) as a full disk does, so only that path's writes are refused.
 */
const FULL = "unavailable: the server's disk is full";

describe.each(databaseBackends)('/readyz on %s: writes refused by the database', (backend) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: false });
    await app.db.pool.query(`
      CREATE FUNCTION refuse_write() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$`);
  }, 60_000);
  afterAll(() => app.close());

  const refuse = (table: string) =>
    app.db.pool.query(
      `CREATE TRIGGER refuse BEFORE INSERT OR UPDATE OR DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION refuse_write()`,
    );
  const allow = (table: string) => app.db.pool.query(`DROP TRIGGER refuse ON ${table}`);
  const readyz = async () => {
    const response = await fetch(`${app.url}/readyz`);
    return { status: response.status, checks: ((await response.json()) as { checks: object }).checks };
  };
  const writesRefused = async () =>
    (await readyz()).checks as Record<string, string> as { 'database (writes)'?: string };
  const ready = async () => (await readyz()).status === 200;

  it('a projection that cannot apply makes the instance unready until it applies again', async () => {
    expect(await ready()).toBe(true);
    await refuse('competitor_list');
    const { outcome } = await app.runtime.gateway.dispatch(addCompetitorCommand('Initech'), {
      ...{ id: app.userIds.editor, name: 'Editor' },
    });
    expect(outcome?.status).toBe('accepted');
    await until(
      async () => (await writesRefused())['database (writes)'] === FULL,
      'the projection runner to report its refused write',
    );
    expect(await readyz()).toMatchObject({ status: 503, checks: { database: 'ok' } });
    // The other projections apply a later change, as they did the first: that is no news of the list's.
    const { outcome: later } = await app.runtime.gateway.dispatch(addCompetitorCommand('Hooli XYZ'), {
      ...{ id: app.userIds.editor, name: 'Editor' },
    });
    expect(later?.status).toBe('accepted');
    await until(
      async () =>
        (await app.db.pool.query(`SELECT 1 FROM audit_log WHERE summary LIKE '%Hooli XYZ%'`)).rows.length > 0,
      'the audit log to apply the later change',
    );
    expect(await readyz()).toMatchObject({ status: 503, checks: { database: 'ok' } });
    await allow('competitor_list');
    await until(ready, '/readyz to be ready once the projection applies again');
  });

  it('a worker that cannot store a command makes the instance unready until it stores again', async () => {
    await refuse('command_outcomes');
    const dispatched = app.runtime.gateway.dispatch(
      addCompetitorCommand('Hooli'),
      { id: app.userIds.editor, name: 'Editor' },
      { timeoutMs: 60_000 },
    );
    await until(
      async () => (await writesRefused())['database (writes)'] === FULL,
      'the worker to report its refused write',
    );
    await allow('command_outcomes');
    expect((await dispatched).outcome?.status).toBe('accepted');
    await until(ready, '/readyz to be ready once the worker stores again');
  });

  it('a sign-in whose session cannot be stored makes the instance unready until one is stored', async () => {
    await refuse('sessions');
    const client = new TestClient(app.url);
    await client.get('/login');
    const refused = await client.postForm('/login', { email: testEmails.editor, password: TEST_PASSWORD });
    expect(refused.status).toBe(503);
    expect((await writesRefused())['database (writes)']).toBe(FULL);
    await allow('sessions');
    await client.signIn(testEmails.editor, TEST_PASSWORD);
    expect(await ready()).toBe(true);
  });

  it('a heartbeat that cannot be stored makes the instance unready; a projection storing meanwhile does not clear it', async () => {
    await refuse('instances');
    const heartbeat = startInstanceHeartbeat({
      db: app.db.pool,
      instanceId: `readiness-${randomUUID()}`,
      settings: { role: 'all' },
      log: silentLog,
      onWrite: app.runtime.writeReport('instances'),
    });
    try {
      await until(
        async () => (await writesRefused())['database (writes)'] === FULL,
        'the heartbeat to report its refused write',
      );
      // Other paths store fine (a row that fits in a page with room says nothing of the heartbeat's table).
      const { outcome } = await app.runtime.gateway.dispatch(addCompetitorCommand('Pied Piper'), {
        ...{ id: app.userIds.editor, name: 'Editor' },
      });
      expect(outcome?.status).toBe('accepted');
      expect((await writesRefused())['database (writes)']).toBe(FULL);
    } finally {
      await allow('instances');
      await heartbeat.stop();
    }
  });
});
