import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runs } from '#tests/support/environment.ts';
import { addCompetitorCommand, envelope } from '#tests/support/runtime-pieces.ts';
import { startTestApp, TEST_METRICS_TOKEN, type TestApp } from '#tests/support/test-app.ts';
import { until } from '#tests/support/until.ts';
import { heldBackNotice } from '#projections/held-back-by.ts';
import { projectionLags } from '#projections/lag.ts';
import { projectionsStatusLines } from '#web/cli/projections-status.server.ts';

/**
 * A transaction left open on the Postgres cluster (an operator's psql that ran an UPDATE and walked
 * away) held every projection back (commit-safe reading, decision 0002); now only one that may write the
 * log does (a writer stopped midway; decision 0028), and the psql session holds nothing back. The lag
 * figures grew, but
 * /readyz said "ok" for as long as fewer than READY_MAX_LAG_EVENTS changes waited (10,000: hours on
 * most sites), and nothing said why: /ops, the log and `projections:status` now name the transaction,
 * /metrics counts how long changes have waited behind it, and /readyz says "held back" while staying
 * ready, since every instance waits for the same transaction (decision 0022). A projection behind on
 * what it could read for longer than READY_MAX_LAG_SECONDS makes /readyz unready.
 *
 * Postgres only: the embedded database runs one transaction at a time, in the process. The transaction
 * held here holds back the projections of every test database on the cluster (the horizon is the
 * cluster's), so this file runs in the cluster-wide project, alone (vitest.config.ts); the transaction is
 * held for the few seconds the limit needs (READY_MAX_LAG_SECONDS=1) and ended however the test ends.
 */
describe.each(runs('postgres') ? ['postgres'] : [])('projections held back on %s', (backend) => {
  let app: TestApp;
  const readyz = async () => {
    const response = await fetch(`${app.url}/readyz`);
    const body = (await response.json()) as { status: string; checks: Record<string, string> };
    return { status: response.status, body };
  };

  beforeAll(async () => {
    app = await startTestApp(backend as 'postgres', {
      demoData: false,
      env: { READY_MAX_LAG_SECONDS: '1' },
    });
  });
  afterAll(async () => app?.close());

  it("a transaction left open that does not write the log (an operator's psql) holds nothing back", async () => {
    const open = new pg.Client({ connectionString: app.db.url, application_name: 'forgotten psql' });
    await open.connect();
    try {
      await open.query('BEGIN');
      // It has written (it holds a transaction id), only not to the log.
      await open.query('CREATE TEMP TABLE scratch (x int)');
      const name = `Not held ${randomUUID()}`;
      await app.runtime.route(envelope(addCompetitorCommand(name)));
      const admin = await app.client('admin');
      await until(
        async () =>
          (await (await admin.get(`/competitors?search=${encodeURIComponent(name)}`)).text()).includes(name),
        'the change to be projected while the transaction stays open',
        8_000,
      );
      // Every projection catches up (not only the one the page reads) and nothing is said to be held back.
      await until(async () => (await readyz()).body.checks.projections === 'ok', '/readyz to say ok', 8_000);
      expect(await heldBackNotice(app.db, await projectionLags(app.db.pool), 0)).toBeUndefined();
    } finally {
      await open.query('ROLLBACK').catch(() => undefined);
      await open.end();
    }
  });

  it('a writer of the log left open: /readyz stays ready saying "held back"; /ops, /metrics and projections:status say which one', async () => {
    const open = new pg.Client({ connectionString: app.db.url, application_name: 'forgotten psql' });
    await open.connect();
    try {
      await open.query('BEGIN');
      // A writer stopped midway: it holds the log's append lock and a transaction id.
      const { rows } = await open.query<{ pid: number }>(
        'SELECT pg_backend_pid() AS pid, log_append_lock(), pg_current_xact_id()',
      );
      const pid = rows[0]?.pid;
      // Committed after the open transaction took its id: no projection may read it before it ends.
      await app.runtime.route(envelope(addCompetitorCommand(`Held ${randomUUID()}`)));
      await until(
        async () => (await readyz()).body.checks.projections?.startsWith('held back') ?? false,
        '/readyz to say the projections are held back',
        // Short: the transaction held here holds back every test database on the cluster.
        8_000,
      );
      const { status, body } = await readyz();
      expect(status).toBe(200);
      expect(body.status).toBe('ready');
      expect(body.checks.projections).toBe('held back: a transaction left open in the database (see /ops)');

      const admin = await app.client('admin');
      const ops = await (await admin.get('/ops')).text();
      expect(ops).toContain(`pid ${pid} (`);
      expect(ops).toContain('application &quot;forgotten psql&quot;');

      const lines = await projectionsStatusLines(app.db, app.runtime.store, 1);
      const notice = lines.find((line) => line.startsWith('Held back:')) ?? '';
      expect(notice).toContain(`pid ${pid} (`);
      expect(notice).toContain('application "forgotten psql"');
      expect(notice).toContain('pg_terminate_backend');
      expect(lines.find((line) => line.startsWith('competitor-list '))).not.toMatch(/behind +0 events/);

      const metrics = await (
        await fetch(`${app.url}/metrics`, { headers: { Authorization: `Bearer ${TEST_METRICS_TOKEN}` } })
      ).text();
      const heldBack = /^rivals_projections_held_back_seconds ([\d.]+)$/m.exec(metrics)?.[1];
      expect(Number(heldBack)).toBeGreaterThan(1);
      expect(metrics).toContain('rivals_dependency_unavailable{dependency="projections"} 0');
    } finally {
      await open.query('ROLLBACK').catch(() => undefined);
      await open.end();
    }
    // Once it ends, the projections catch up and nothing is said any more.
    await until(async () => (await readyz()).body.checks.projections === 'ok', 'the projections to catch up');
    const lines = await projectionsStatusLines(app.db, app.runtime.store, 1);
    expect(lines.some((line) => line.startsWith('Held back:'))).toBe(false);
  });

  it('a projection that leaves events it could read unprojected past READY_MAX_LAG_SECONDS makes /readyz unready', async () => {
    // No transaction is held here: the runner stops, so the events wait for it alone.
    await app.runtime.runner?.stop();
    try {
      await app.runtime.route(envelope(addCompetitorCommand(`Unprojected ${randomUUID()}`)));
      await until(async () => (await readyz()).status === 503, '/readyz to turn unready');
      const { body } = await readyz();
      expect(body.checks.projections).toMatch(
        /^behind: .*competitor-list.* \(limit READY_MAX_LAG_SECONDS\)$/,
      );
    } finally {
      await app.runtime.runner?.start();
    }
    await until(async () => (await readyz()).status === 200, 'ready again once projected');
  });
});
