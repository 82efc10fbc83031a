import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventRegistry } from '#events/all-events.ts';
import { exportEvents } from '#events/store/export-log.ts';
import type { EventStore } from '#events/store/event-store.ts';
import { verifyLog } from '#events/store/verify-log.ts';
import { seedCompetitors } from '#services/seed/seed-competitors.ts';
import { backendUrl, databaseBackends } from '#tests/support/environment.ts';
import { writeSide } from '#tests/support/runtime-pieces.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

async function count<T>(items: AsyncIterable<T>): Promise<number> {
  let n = 0;
  for await (const _ of items) n++;
  return n;
}

describe.each(databaseBackends)('events:verify and events:export on %s', (backend) => {
  let db: TestDatabase;
  let store: EventStore;

  beforeAll(async () => {
    db = await createTestDatabase(backend);
    ({ store } = await writeSide(db));
    await seedCompetitors(db.pool, store, { count: 120, seed: 11, batchSize: 50 });
  });
  afterAll(async () => db.drop());

  it('export streams every event in commit order; filters by position, time, type and stream', async () => {
    const { rows } = await db.pool.query<{ n: number; mid: number }>(
      'SELECT count(*)::int AS n, (max(position) / 2)::int AS mid FROM events',
    );
    const total = rows[0]?.n ?? 0;
    const mid = rows[0]?.mid ?? 0;
    expect(await count(exportEvents(db.pool, eventRegistry, {}, 37))).toBe(total);
    const { rows: upper } = await db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM events WHERE position >= $1',
      [mid],
    );
    expect(await count(exportEvents(db.pool, eventRegistry, { from: { position: mid } }, 37))).toBe(
      upper[0]?.n,
    );
    const { rows: added } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events WHERE type = 'CompetitorAdded'`,
    );
    expect(await count(exportEvents(db.pool, eventRegistry, { types: ['CompetitorAdded'] }))).toBe(
      added[0]?.n,
    );
    const { rows: one } = await db.pool.query<{ stream: string; n: number }>(
      `SELECT stream, count(*)::int AS n FROM events WHERE stream LIKE 'competitor-%' AND stream NOT LIKE 'competitor-name-%'
       GROUP BY stream ORDER BY stream LIMIT 1`,
    );
    const stream = one[0]?.stream ?? '';
    const fromStream = [];
    for await (const e of exportEvents(db.pool, eventRegistry, { stream })) fromStream.push(e);
    expect(fromStream).toHaveLength(one[0]?.n ?? -1);
    expect(fromStream.map((e) => e.streamVersion)).toEqual(fromStream.map((_, i) => i + 1));
    const future = new Date(Date.now() + 3_600_000);
    expect(await count(exportEvents(db.pool, eventRegistry, { from: { time: future } }))).toBe(0);
    expect(await count(exportEvents(db.pool, eventRegistry, { to: { time: future } }))).toBe(total);
  });

  // Postgres only: the embedded database has one connection, so no other transaction can be open.
  if (backend === 'postgres')
    it('exports every committed event while an unrelated transaction is open elsewhere in the cluster', async () => {
      const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events');
      // Another database on the same server, in a transaction that has written (it holds an xid): the
      // commit-safe horizon of the whole cluster stays behind it.
      const other = new pg.Client({ connectionString: backendUrl('postgres') });
      await other.connect();
      try {
        await other.query('BEGIN');
        await other.query('SELECT pg_current_xact_id()');
        const later = await writeSide(db);
        await seedCompetitors(db.pool, later.store, { count: 3, seed: 12, batchSize: 3 });
        const { rows: now } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events');
        expect(now[0]?.n).toBeGreaterThan(rows[0]?.n ?? 0);
        expect(await count(exportEvents(db.pool, eventRegistry, {}, 37))).toBe(now[0]?.n);
      } finally {
        await other.query('ROLLBACK').catch(() => undefined);
        await other.end();
      }
    });

  it('reads an event stored at an older schema version as the current one (the upcaster)', async () => {
    const v1 = {
      projection: 'audit-log',
      events: 7,
      toPosition: null,
      toTime: null,
      dryRun: true,
      differences: 0,
    };
    await db.pool.query(
      `INSERT INTO events (stream, stream_version, type, schema_version, data, metadata, command_id)
       VALUES ('upcaster-example', 1, 'ProjectionRebuilt', 1, $1, $2, 'upcaster-example')`,
      [
        JSON.stringify(v1),
        JSON.stringify({
          actor: { id: 'system', name: 'Rivals' },
          commandId: 'upcaster-example',
          correlationId: 'x',
          at: new Date().toISOString(),
        }),
      ],
    );
    await db.pool.query(`INSERT INTO event_streams (stream, version) VALUES ('upcaster-example', 1)`);
    const read = [];
    for await (const e of exportEvents(db.pool, eventRegistry, { stream: 'upcaster-example' })) read.push(e);
    expect(read).toHaveLength(1);
    expect(read[0]?.schemaVersion).toBe(1);
    expect(read[0]?.data).toEqual({ ...v1, rows: null, seconds: null, resumed: false });
    const { events } = await store.readStream('upcaster-example');
    expect(events[0]?.data).toEqual(read[0]?.data);
  });

  it('verify passes a healthy log, then reports an injected version gap and an unparseable event', async () => {
    const healthy = await verifyLog(db.pool, eventRegistry, { batchSize: 53 });
    expect(healthy.problems).toEqual([]);
    expect(healthy.events).toBeGreaterThan(300);

    // Test database only: lift the append-only guard to damage the log on purpose.
    await db.pool.query('ALTER TABLE events DISABLE TRIGGER events_no_update_or_delete');
    const { rows } = await db.pool.query<{ stream: string; position: number }>(
      `SELECT stream, position FROM events WHERE stream_version = 2 AND stream LIKE 'competitor-%' ORDER BY position LIMIT 2`,
    );
    const [gap, garbled] = rows;
    await db.pool.query('DELETE FROM events WHERE position = $1', [gap?.position]);
    await db.pool.query(`UPDATE events SET data = '{"competitorId": 42}' WHERE position = $1`, [
      garbled?.position,
    ]);
    await db.pool.query('ALTER TABLE events ENABLE TRIGGER events_no_update_or_delete');

    const damaged = await verifyLog(db.pool, eventRegistry, { limit: 5 });
    const messages = damaged.problems.map((p) => `[${p.kind}] ${p.message}`);
    expect(messages).toContainEqual(
      expect.stringMatching(
        new RegExp(`^\\[stream-versions\\] stream ${gap?.stream} jumps from version 1 to 3`),
      ),
    );
    expect(messages).toContainEqual(
      expect.stringMatching(
        new RegExp(`^\\[schema\\] event at position ${garbled?.position} \\(\\w+ v\\d\\) does not parse: `),
      ),
    );
    // The deleted event was one a command outcome names.
    expect(messages).toContainEqual(
      expect.stringMatching(
        new RegExp(`^\\[outcome\\] command .* at position ${gap?.position}, which does not exist`),
      ),
    );
  });
});

// Real processes against a real server (the embedded database is one process's alone).
describe.each(databaseBackends.filter((b) => b === 'postgres'))(
  'events:export in constant memory (%s, CLI)',
  () => {
    let db: TestDatabase;

    beforeAll(async () => {
      db = await createTestDatabase('postgres');
      const { store } = await writeSide(db);
      // About 60 MB of NDJSON: more than the 48 MB heap the export gets below.
      await seedCompetitors(db.pool, store, { count: 25_000, seed: 17 });
    }, 300_000);
    afterAll(async () => db.drop());

    it('exports a log bigger than its heap, line count equal to the event count', async () => {
      const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events');
      const child = spawn(
        process.execPath,
        ['--max-old-space-size=48', '--import', 'tsx', 'web/cli.server.ts', 'events:export'],
        {
          cwd: root,
          env: {
            PATH: process.env.PATH ?? '',
            // No SESSION_SECRET: operator commands sign no sessions, and need none on Postgres either.
            DATABASE_URL: db.url,
            LOG_LEVEL: 'warn',
          },
        },
      );
      let lines = 0;
      let bytes = 0;
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => {
        bytes += d.length;
        for (const byte of d) if (byte === 10) lines++;
      });
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      expect(stderr).toContain(`Exported ${rows[0]?.n} events.`);
      expect(code).toBe(0);
      expect(lines).toBe(rows[0]?.n);
      expect(bytes).toBeGreaterThan(48 * 1024 * 1024);
    }, 300_000);
  },
);
