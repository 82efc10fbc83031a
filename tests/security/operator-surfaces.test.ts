import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '#infra/db/database.ts';
import { addCompetitorCommand, envelope, giveUp } from '#tests/support/runtime-pieces.ts';
import type { TestClient } from '#tests/support/test-client.ts';
import { eventCount, messageOf } from './support/helpers.ts';
import { classics, encode } from './support/hostile.ts';
import {
  METRICS_TOKEN,
  securityBackends,
  startSecurityApp,
  type SecurityApp,
} from './support/security-app.ts';

/** A GET with headers fetch would refuse to send (bytes above 0x7f in a header), answered as latin1. */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString('latin1')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Counts the lag query (`projectionLags`) while `work` runs; only /ops, /readyz and /metrics send it. */
async function lagQueries(db: Database, work: () => Promise<void>): Promise<number> {
  const pool = db.pool as unknown as { query: (...args: unknown[]) => Promise<unknown> };
  const query = pool.query;
  let count = 0;
  pool.query = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].includes('waiting_seconds')) count++;
    return query.apply(pool, args);
  };
  try {
    await work();
  } finally {
    pool.query = query;
  }
  return count;
}

/**
 * A review of the operator surfaces over HTTP: the /metrics token in every shape a scraper or an
 * attacker sends it, /readyz with junk, and the dead letters' Retry / Discard clicked twice, crossed,
 * aimed at ids that are not there or not ids, by the wrong role or without the form token.
 */
describe.each(securityBackends)('operator surfaces on %s', (backend) => {
  let app: SecurityApp;
  let admin: TestClient;

  beforeAll(async () => {
    app = await startSecurityApp(backend);
    admin = await app.client('admin');
  });
  afterAll(async () => app?.close());

  /** Puts a command in the dead letters as a worker does after too many failures; its id. */
  const deadLetter = () =>
    giveUp(app.runtime, envelope(addCompetitorCommand(`Dead ${randomUUID().slice(0, 8)}`)));
  const listed = async (id: string) => (await app.runtime.deadLetters.find(id)) !== undefined;
  const actions = async () => ({
    retried: await eventCount(app, 'DeadLetterRetried'),
    discarded: await eventCount(app, 'DeadLetterDiscarded'),
  });
  const post = async (client: TestClient, id: string, action: 'retry' | 'discard') => {
    await client.get('/ops');
    return client.postForm(`/ops/dead-letters/${id}/${action}`, {});
  };

  it('/metrics runs no database query for a request without the token', async () => {
    const refused = await lagQueries(app.db, async () => {
      for (const authorization of ['', 'Bearer wrong-token', `Basic ${METRICS_TOKEN}`]) {
        const response = await fetch(`${app.url}/metrics`, { headers: { Authorization: authorization } });
        expect(response.status, authorization).toBe(401);
      }
    });
    expect(refused).toBe(0);
    const allowed = await lagQueries(app.db, async () => {
      const response = await fetch(`${app.url}/metrics`, {
        headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
      });
      expect(response.status).toBe(200);
      expect(await response.text()).toMatch(/rivals_projection_lag_events\{projection="audit-log"\} \d+/);
    });
    expect(allowed).toBe(1);
  });

  it('/metrics takes the Bearer scheme in any case and after several spaces; refuses every other shape with 401', async () => {
    for (const authorization of [`bearer ${METRICS_TOKEN}`, `BEARER   ${METRICS_TOKEN}`]) {
      const response = await fetch(`${app.url}/metrics`, { headers: { Authorization: authorization } });
      expect(response.status, authorization).toBe(200);
    }
    const refusals = [
      '',
      'Bearer',
      'Bearer ',
      `Basic ${METRICS_TOKEN}`,
      `Bearer ${METRICS_TOKEN}x`,
      `Bearer ${METRICS_TOKEN.slice(0, -1)}`,
      `Bearer ${METRICS_TOKEN} ${METRICS_TOKEN}`,
      `Bearer ${'a'.repeat(8_000)}`,
      `Bearer ${METRICS_TOKEN}\u00e9`,
      'Bearer \u00ff\u00fe',
    ];
    for (const authorization of refusals) {
      const response = await rawGet(`${app.url}/metrics`, { Authorization: authorization });
      const what = JSON.stringify(authorization.slice(0, 60));
      expect(response.status, what).toBe(401);
      expect(response.body, what).toContain('Metrics need the operator token');
      expect(response.body, what).not.toContain('process_cpu');
    }
    // Past Node's header limit: refused by the HTTP parser, before the app.
    expect(
      (await rawGet(`${app.url}/metrics`, { Authorization: `Bearer ${'a'.repeat(20_000)}` })).status,
    ).toBe(431);
  });

  it('/readyz ignores junk in the query and answers its JSON', async () => {
    for (const path of ['/readyz?x=%00', `/readyz?${'a'.repeat(5_000)}`, '/readyz?checks=__proto__']) {
      const response = await fetch(app.url + path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(((await response.json()) as { status: string }).status).toBe('ready');
    }
  });

  it("/readyz says which dependency is down, never the driver's words (hosts, users, databases)", async () => {
    const leak = 'password authentication failed for user "rivals_owner" on db-7.internal:5432';
    const pool = app.db.pool as unknown as { query: (...args: unknown[]) => Promise<unknown> };
    const query = pool.query;
    pool.query = (...args: unknown[]) =>
      args[0] === 'SELECT 1' ? Promise.reject(new Error(leak)) : query.apply(pool, args);
    app.runtime.readiness.report('command bus', new Error(`connect ECONNREFUSED 10.9.8.7:6379 (${leak})`));
    try {
      const response = await fetch(`${app.url}/readyz`);
      const text = await response.text();
      expect(response.status).toBe(503);
      expect(JSON.parse(text)).toEqual({
        status: 'not ready',
        checks: expect.objectContaining({
          database: 'unavailable',
          projections: 'unknown',
          'command bus': 'unavailable',
        }) as unknown,
      });
      for (const secret of ['rivals_owner', 'db-7.internal', '10.9.8.7', 'ECONNREFUSED', 'password'])
        expect(text).not.toContain(secret);
    } finally {
      pool.query = query;
      app.runtime.readiness.report('command bus', undefined);
    }
    expect((await fetch(`${app.url}/readyz`)).status).toBe(200);
  });

  it('Retry / Discard of an id that is not a dead letter answers 4xx with words, never 500, and records nothing', async () => {
    const before = await actions();
    const ids = [
      ...classics.filter((c) => c !== '').map(encode),
      '%00',
      randomUUID(),
      '1'.repeat(21),
      'x'.repeat(10_000),
    ];
    await admin.get('/ops');
    for (const id of ids) {
      for (const action of ['retry', 'discard'] as const) {
        const response = await admin.postForm(`/ops/dead-letters/${id}/${action}`, {});
        const what = `${action} ${id.slice(0, 40)}`;
        expect(response.status, what).toBeGreaterThanOrEqual(400);
        expect(response.status, what).toBeLessThan(500);
        expect((await messageOf(response)).trim(), what).not.toBe('');
      }
    }
    expect((await post(admin, '%00', 'retry')).status).toBe(404);
    expect(await messageOf(await post(admin, 'x'.repeat(10_000), 'discard'))).toContain(
      'There is no such dead letter.',
    );
    // A well-formed id that is not there: the same answer as one handled meanwhile.
    const missing = await post(admin, '123456789', 'retry');
    expect(missing.status).toBe(302);
    expect(await (await admin.get('/ops')).text()).toContain(
      'That dead letter was already retried or discarded.',
    );
    expect(await actions()).toEqual(before);
  });

  it('only an admin with the form token acts on a dead letter', async () => {
    const id = await deadLetter();
    const before = await actions();
    for (const role of ['viewer', 'editor'] as const) {
      const client = await app.client(role);
      await client.get('/competitors'); // a page they may see, for its form token
      for (const action of ['retry', 'discard'] as const) {
        const refused = await client.postForm(`/ops/dead-letters/${id}/${action}`, {});
        expect(refused.status, `${role} ${action}`).toBe(403);
      }
    }
    for (const action of ['retry', 'discard'] as const) {
      await admin.get('/ops');
      const refused = await admin.postForm(`/ops/dead-letters/${id}/${action}`, {}, { csrf: false });
      expect(refused.status, action).toBe(403);
    }
    expect(await actions()).toEqual(before);
    expect(await listed(id)).toBe(true);
    expect((await post(admin, id, 'discard')).status).toBe(302);
  });

  it('Retry and Discard clicked at once, twice, or one after the other: one action, one event', async () => {
    const id = await deadLetter();
    const before = await actions();
    await admin.get('/ops');
    const answers = await Promise.all([
      admin.postForm(`/ops/dead-letters/${id}/retry`, {}),
      admin.postForm(`/ops/dead-letters/${id}/retry`, {}),
      admin.postForm(`/ops/dead-letters/${id}/discard`, {}),
      admin.postForm(`/ops/dead-letters/${id}/discard`, {}),
    ]);
    expect(answers.map((a) => a.status)).toEqual([302, 302, 302, 302]);
    const after = await actions();
    expect(after.retried - before.retried + after.discarded - before.discarded).toBe(1);
    // Afterwards, either action finds nothing to do. Sent without the form's fields (a script), it cannot
    // name the letter's record (dead-letter-resend.test.ts: the form's own resend is told what and who).
    for (const action of ['retry', 'discard'] as const) {
      expect((await post(admin, id, action)).status).toBe(302);
      expect(await (await admin.get('/ops')).text()).toContain(
        'That dead letter was already retried or discarded.',
      );
    }
    expect(await actions()).toEqual(after);
  });

  it('the action is recorded before the letter is touched: a database failure after it leaves the letter listed as recorded, and the next click finishes it', async () => {
    const id = await deadLetter();
    const before = await actions();
    const letters = app.runtime.deadLetters;
    const retry = letters.retry.bind(letters);
    letters.retry = () => Promise.reject(new Error('Connection terminated unexpectedly'));
    try {
      expect((await post(admin, id, 'retry')).status).toBe(302);
    } finally {
      letters.retry = retry;
    }
    const page = await (await admin.get('/ops')).text();
    expect(page).toContain(
      'The retry is recorded, but the database did not answer. Click Retry again to finish it.',
    );
    expect(page).toContain('Retry recorded, not carried out');
    expect(await listed(id)).toBe(true);
    expect(await actions()).toEqual({ ...before, retried: before.retried + 1 });
    // Another admin clicks Discard meanwhile: the recorded retry is what happens, once, and is not recorded twice.
    expect((await post(admin, id, 'discard')).status).toBe(302);
    expect(await (await admin.get('/ops')).text()).toContain(
      'That dead letter was already retried by you, so it was not discarded.',
    );
    expect(await listed(id)).toBe(false);
    expect(await actions()).toEqual({ ...before, retried: before.retried + 1 });
  });

  it('a database that fails before the action is recorded: the letter is not touched, and the answer says nothing changed', async () => {
    const id = await deadLetter();
    const before = await actions();
    const store = app.runtime.store;
    const append = store.append.bind(store);
    const down = Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
    });
    store.append = () => Promise.reject(down);
    let answer;
    try {
      await admin.get('/ops');
      answer = await admin.postForm(`/ops/dead-letters/${id}/discard`, {});
    } finally {
      store.append = append;
    }
    expect(answer.status).toBe(503);
    expect(await answer.text()).toContain('Nothing was changed');
    expect(await listed(id)).toBe(true);
    expect(await actions()).toEqual(before);
    expect((await post(admin, id, 'discard')).status).toBe(302);
    expect(await actions()).toEqual({ ...before, discarded: before.discarded + 1 });
  });

  it('the same idempotency key on two dead letters acts on each once (the key binds no dead-letter action)', async () => {
    const [first, second] = [await deadLetter(), await deadLetter()];
    const before = await actions();
    const key = randomUUID();
    for (const id of [first, second, first]) {
      await admin.get('/ops');
      const response = await admin.postForm(`/ops/dead-letters/${id}/retry`, { _idempotency_key: key });
      expect(response.status, id).toBe(302);
    }
    expect((await actions()).retried).toBe(before.retried + 2);
    const left = (await app.runtime.deadLetters.list()).map((d) => d.id);
    expect(left).not.toContain(first);
    expect(left).not.toContain(second);
  });
});
