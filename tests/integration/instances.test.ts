import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sessionKeyOf, startInstanceHeartbeat, type InstanceHeartbeat } from '#infra/instances.ts';
import { createLogger } from '#infra/logger.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { until } from '#tests/support/until.ts';
import { startTestApp, TEST_METRICS_TOKEN, type TestApp } from '#tests/support/test-app.ts';

/** A logger whose lines are kept, parsed. */
function capturedLog() {
  const lines: { level: number; msg: string; setting?: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: createLogger('info', sink), lines };
}

const SECRET = 'a'.repeat(40);
const OTHER_SECRET = 'b'.repeat(40);

/**
 * The instance registry (migration 028) on both databases: every process keeps a heartbeat row with the
 * settings instances must share; instances that differ are logged once, shown on /ops and in /metrics,
 * and a process that stops (cleanly or not) leaves the list.
 */
describe.each(databaseBackends)('instances on %s', (backend) => {
  let app: TestApp;
  const beats: InstanceHeartbeat[] = [];
  /**
   * A heartbeat as another process would run it. Only the one started with `app: true` reports to the
   * app's /metrics, as each process reports its own view: with several, the gauge was whichever beat
   * answered last, and a beat that had read the rows before a change could answer after one that had not.
   */
  const start = (
    instanceId: string,
    settings: { sessionSecret?: string; redisPrefix?: string; app?: boolean },
    log = capturedLog(),
  ) => {
    const { app: reportsMetrics = false, ...shared } = settings;
    const counter = { checks: 0 };
    const beat = startInstanceHeartbeat({
      db: app.db.pool,
      instanceId,
      settings: { role: shared.sessionSecret ? 'web' : 'worker', ...shared },
      log: log.log,
      everyMs: 50,
      onCheck: (d) => {
        counter.checks++;
        if (reportsMetrics) app.runtime.metrics.reportDisagreements(d);
      },
    });
    beats.push(beat);
    return { beat, lines: log.lines, counter };
  };
  /** Whether these instances have a row (each heartbeat writes its own first, on its own connection). */
  const registered = async (...ids: string[]) => {
    const { rows } = await app.db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM instances WHERE instance_id = ANY($1)',
      [ids],
    );
    return rows[0]?.n === ids.length;
  };
  const metrics = async () =>
    (
      await fetch(`${app.url}/metrics`, { headers: { Authorization: `Bearer ${TEST_METRICS_TOKEN}` } })
    ).text();

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: false });
  });
  afterEach(async () => {
    await Promise.all(beats.splice(0).map((b) => b.stop()));
    await app.db.pool.query('TRUNCATE instances');
  });
  afterAll(async () => app?.close());

  it('lists the live instances on /ops, with a fingerprint of the secret, never the secret', async () => {
    const a = start('web-a', { sessionSecret: SECRET, redisPrefix: 'rivals:', app: true });
    start('worker-a', { redisPrefix: 'rivals:' });
    const admin = await app.client('admin');
    // Each row is written on a connection of its own: worker-a's can be there before web-a's.
    await until(async () => {
      const page = await admin.get('/ops').then((r) => r.text());
      return page.includes('data-instance="web-a"') && page.includes('data-instance="worker-a"');
    }, 'both rows');
    // The gauge has no value until web-a's first check (its row is written before it looks).
    await until(() => a.counter.checks > 0, 'a check by web-a');
    const page = await (await admin.get('/ops')).text();
    expect(page).toContain('data-instance="web-a"');
    expect(page).toContain(`fingerprint ${sessionKeyOf(SECRET)}`);
    expect(page).toContain('— (signs no sessions)');
    expect(page).not.toContain(SECRET);
    expect(page).not.toContain('data-instance-disagreements');
    expect(await metrics()).toContain('rivals_instance_settings_differ{setting="SESSION_SECRET"} 0');
    // Only admins see /ops.
    expect((await (await app.client('editor')).get('/ops')).status).toBe(403);
  });

  it('another SESSION_SECRET is logged once as an error, shown on /ops and in /metrics; stopping it ends that', async () => {
    const a = start('web-a', { sessionSecret: SECRET, redisPrefix: 'rivals:', app: true });
    const b = start('web-b', { sessionSecret: SECRET, redisPrefix: 'rivals:' });
    // The odd one joins two that are there already. Started together, on Postgres each first write goes
    // out on a connection of its own and they land in any order: a beat that saw web-a and web-c but not
    // yet web-b logged a disagreement of one against one, and the next beat, seeing all three, another.
    await until(() => registered('web-a', 'web-b'), 'web-a and web-b to have their rows');
    const c = start('web-c', { sessionSecret: OTHER_SECRET, redisPrefix: 'rivals:' });
    const errors = () => a.lines.filter((l) => l.level === 50 && l.setting === 'SESSION_SECRET');
    await until(() => errors().length > 0, 'the error line');
    // Many heartbeats later, still one line: logged when it appears, not on every beat.
    const seen = a.counter.checks;
    await until(() => a.counter.checks >= seen + 10, 'ten more heartbeats of web-a');
    expect(errors()).toHaveLength(1);
    expect(errors()[0]?.msg).toContain('instances run with different SESSION_SECRET values');
    expect(errors()[0]).toMatchObject({
      groups: [
        { value: sessionKeyOf(SECRET), instances: ['web-a', 'web-b'] },
        { value: sessionKeyOf(OTHER_SECRET), instances: ['web-c'] },
      ],
    });
    expect(c.lines.some((l) => l.level === 50)).toBe(true);

    const admin = await app.client('admin');
    const page = await (await admin.get('/ops')).text();
    expect(page).toContain('data-instance-disagreements');
    expect(page).toContain('The instances run with different SESSION_SECRET values.');
    expect(page).toContain(`secret with fingerprint ${sessionKeyOf(OTHER_SECRET)}: web-c`);
    expect(page).not.toContain('different REDIS_PREFIX');
    expect(await metrics()).toContain('rivals_instance_settings_differ{setting="SESSION_SECRET"} 1');

    await c.beat.stop();
    await until(
      () => a.lines.some((l) => l.msg === 'instances agree on their shared settings again'),
      'agree',
    );
    expect(await metrics()).toContain('rivals_instance_settings_differ{setting="SESSION_SECRET"} 0');
    expect(await (await admin.get('/ops')).text()).not.toContain('data-instance-disagreements');
    expect(b.lines.filter((l) => l.level === 50)).toHaveLength(1);
  });

  it('another REDIS_PREFIX is a disagreement too; an instance without Redis or a secret takes no part', async () => {
    const a = start('web-a', { sessionSecret: SECRET, redisPrefix: 'rivals:', app: true });
    start('worker-b', { redisPrefix: 'staging:' });
    start('embedded', {});
    await until(() => a.lines.some((l) => l.level === 50), 'the error line');
    expect(a.lines.filter((l) => l.level === 50).map((l) => l.setting)).toEqual(['REDIS_PREFIX']);
    const page = await (await (await app.client('admin')).get('/ops')).text();
    expect(page).toContain('The instances run with different REDIS_PREFIX values.');
    expect(page).toContain('“staging:”: worker-b');
  });

  it('a process that stopped without a word leaves the list after 30 s and its row after a day', async () => {
    await app.db.pool.query(
      `INSERT INTO instances (instance_id, role, host, pid, session_key, seen_at) VALUES
         ('killed-a-minute-ago', 'web', 'h', 1, 'ffffffffffff', now() - interval '1 minute'),
         ('killed-two-days-ago', 'web', 'h', 2, 'eeeeeeeeeeee', now() - interval '2 days')`,
    );
    const a = start('web-a', { sessionSecret: SECRET, app: true });
    await until(async () => {
      const { rows } = await app.db.pool.query('SELECT instance_id FROM instances ORDER BY 1');
      return rows.length === 2;
    }, 'the two-day-old row to go');
    const page = await (await (await app.client('admin')).get('/ops')).text();
    expect(page).toContain('data-instance="web-a"');
    expect(page).not.toContain('killed-a-minute-ago');
    expect(page).not.toContain('data-instance-disagreements');
    expect(a.lines.filter((l) => l.level === 50)).toEqual([]);
    // A clean stop removes its own row at once.
    await a.beat.stop();
    const { rows } = await app.db.pool.query("SELECT 1 FROM instances WHERE instance_id = 'web-a'");
    expect(rows).toEqual([]);
  });
});
