import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { databaseBackends } from '#tests/support/environment.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';
import { SEARCH_BUSY_MESSAGE, SEARCH_TOO_LONG_MESSAGE } from '#web/search-reads.server.ts';

/**
 * Searches that run long (a flood of deep searched pages at 100k competitors; here, a table lock makes
 * them wait as long as we like) must neither hold a connection without bound nor take the whole pool
 * from everyone else (docs/decisions/0026). Postgres only: the embedded database has one session, so
 * nothing else can hold a lock while a search waits on it.
 */

const postgresOnly = databaseBackends.filter((backend) => backend === 'postgres');

/** Holds an exclusive lock on `table` (every statement reading it waits) until the returned release. */
async function lockTable(app: TestApp, table: string): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: app.db.url });
  await client.connect();
  await client.query('BEGIN');
  await client.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await client.query('ROLLBACK');
    await client.end();
  };
  // Without the fix the searches below would wait here forever: let them go eventually, so they answer
  // (200, which the assertions refuse) instead of the test hanging.
  setTimeout(() => void release(), 20_000).unref();
  return release;
}

const textOf = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

describe.each(postgresOnly)('searches that take too long (%s)', (backend) => {
  let app: TestApp | undefined;
  let release: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await release?.();
    await app?.close();
    app = undefined;
  });

  it('a search held past SEARCH_TIMEOUT_MS answers 503 saying so, with Retry-After; so do those waiting behind it', async () => {
    app = await startTestApp(backend, { env: { SEARCH_TIMEOUT_MS: '1000' } });
    const viewer = await app.client('viewer');
    release = await lockTable(app, 'competitor_list');
    // The test pool has 20 connections: searches may hold 10; 12 first pages want 24 statements.
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => viewer.get(`/competitors?search=acme${i}&sort=name:desc`)),
    );
    const texts = await Promise.all(answers.map(async (answer) => textOf(await answer.text())));
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 503));
    expect(answers.every((answer) => answer.headers.get('Retry-After') === '2')).toBe(true);
    expect(texts.some((text) => text.includes(SEARCH_TOO_LONG_MESSAGE))).toBe(true);
    expect(texts.some((text) => text.includes(SEARCH_BUSY_MESSAGE))).toBe(true);
    expect(texts.every((text) => /Back in a moment/.test(text))).toBe(true);
    // Once the table is free again, the same search answers.
    await release();
    const after = await viewer.get('/competitors?search=acme0&sort=name:desc');
    expect(after.status).toBe(200);
  }, 60_000);

  it('while searches hold every connection they may, other pages still answer', async () => {
    app = await startTestApp(backend, { env: { SEARCH_TIMEOUT_MS: '8000' } });
    const viewer = await app.client('viewer');
    const admin = await app.client('admin');
    release = await lockTable(app, 'competitor_list');
    // 15 first pages: 30 statements, more than the pool's 20 connections.
    const flood = Array.from({ length: 15 }, (_, i) =>
      viewer.get(`/competitors?search=acme${i}`).then((answer) => answer.status),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Someone else's pages (tables the searches do not read): answered while the searches wait.
    const users = await admin.get('/users');
    const audit = await admin.get('/audit');
    expect(users.status).toBe(200);
    expect(await users.text()).toContain('viewer@rivals.test');
    expect(audit.status).toBe(200);
    await release();
    const statuses = await Promise.all(flood);
    expect(statuses.every((status) => status === 200 || status === 503)).toBe(true);
  }, 60_000);

  it('a page that waited in vain for a connection while all were in use says the server is busy, not unreachable', async () => {
    app = await startTestApp(backend);
    const admin = await app.client('admin');
    // Every connection of the pool (20 in test apps) taken, as a flood of slow requests would.
    const held = await Promise.all(Array.from({ length: 20 }, () => app!.db.pool.connect()));
    try {
      const answer = await admin.get('/users');
      const text = textOf(await answer.text());
      expect(answer.status).toBe(503);
      expect(answer.headers.get('Retry-After')).toBe('2');
      expect(text).toContain('Rivals is too busy to answer right now. Nothing was changed');
      expect(text).not.toContain('cannot reach');
    } finally {
      for (const client of held) client.release();
    }
    expect((await admin.get('/users')).status).toBe(200);
  }, 60_000);
});
