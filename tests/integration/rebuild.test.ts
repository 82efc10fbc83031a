import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventStore } from '#events/store/event-store.ts';
import { allProjections } from '#projections/all-projections.ts';
import { competitorListProjection } from '#projections/competitor-list/competitor-list.projection.ts';
import { RebuildBusyError, takeRebuildLease } from '#projections/rebuild/rebuild-lease.ts';
import { rebuildProjections } from '#projections/rebuild/rebuild.ts';
import type { ProjectionRunner } from '#projections/runner.ts';
import { seedCompetitors } from '#services/seed/seed-competitors.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { writeSide } from '#tests/support/runtime-pieces.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe.each(databaseBackends)('rebuilding projections on %s', (backend) => {
  let db: TestDatabase;
  let store: EventStore;
  let runner: ProjectionRunner;

  beforeAll(async () => {
    db = await createTestDatabase(backend);
    ({ store, runner } = await writeSide(db));
    await seedCompetitors(db.pool, store, { count: 300, seed: 3, batchSize: 100 });
    for (const p of allProjections) await runner.catchUp(p);
  });
  afterAll(async () => db.drop());

  it('a dry run finds a row corrupted on purpose in a live table, and changes nothing', async () => {
    await db.pool.query(
      `UPDATE competitor_list SET name = 'corrupted' WHERE id = (SELECT id FROM competitor_list ORDER BY rank LIMIT 1)`,
    );
    const summaries = await rebuildProjections(db, store, allProjections, { dryRun: true, batchSize: 250 });
    const byName = new Map(summaries.map((s) => [s.projection, s]));
    // The corrupted row is only live; its correct version only rebuilt.
    expect(byName.get('competitor-list')?.differences).toBe(2);
    for (const other of ['segment-board', 'user-list', 'note-history', 'audit-log'])
      expect(byName.get(other)?.differences).toBe(0);
    const { rows } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM competitor_list WHERE name = 'corrupted'`,
    );
    expect(rows[0]?.n).toBe(1);
    const { rows: left } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_class WHERE relname LIKE '%\\_\\_shadow'`,
    );
    expect(left[0]?.n).toBe(0);
  });

  it('rebuilds every projection in one pass and swaps: the corruption is gone, indexes and ranks intact', async () => {
    const { rows: before } = await db.pool.query<{ indexname: string }>(
      `SELECT indexname FROM pg_indexes WHERE tablename = 'competitor_list' ORDER BY indexname`,
    );
    const summaries = await rebuildProjections(db, store, allProjections, { batchSize: 400 });
    expect(summaries.map((s) => s.projection)).toEqual(allProjections.map((p) => p.name));
    const list = summaries.find((s) => s.projection === 'competitor-list');
    expect(list?.rows).toBeGreaterThanOrEqual(300);
    const { rows } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM competitor_list WHERE name = 'corrupted'`,
    );
    expect(rows[0]?.n).toBe(0);
    const { rows: after } = await db.pool.query<{ indexname: string }>(
      `SELECT indexname FROM pg_indexes WHERE tablename = 'competitor_list' ORDER BY indexname`,
    );
    expect(after).toEqual(before);
    const { rows: ranks } = await db.pool.query<{ rank: number }>(
      'SELECT rank FROM competitor_list ORDER BY rank',
    );
    expect(ranks.map((r) => r.rank)).toEqual(ranks.map((_, i) => i + 1));
    // The live runner continues from the swapped checkpoint, and a fresh dry run agrees with the result.
    for (const p of allProjections) await runner.catchUp(p);
    const again = await rebuildProjections(db, store, allProjections, { dryRun: true });
    expect(again.map((s) => s.differences)).toEqual(allProjections.map(() => 0));
  });

  it('refuses a second rebuild of the same projection while one runs, naming who holds it', async () => {
    const lease = await takeRebuildLease(db, ['competitor-list']);
    try {
      await db.pool.query(
        `INSERT INTO projection_rebuilds (projection, version, holder) VALUES ('competitor-list', 1, 'ops@host pid 42')
         ON CONFLICT (projection) DO UPDATE SET holder = EXCLUDED.holder`,
      );
      const second = rebuildProjections(db, store, [competitorListProjection]);
      await expect(second).rejects.toBeInstanceOf(RebuildBusyError);
      await expect(second).rejects.toThrow(/competitor-list is already being rebuilt by ops@host pid 42/);
      // Other projections are free.
      const lease2 = await takeRebuildLease(db, ['audit-log']);
      await lease2.release();
    } finally {
      await lease.release();
      await db.pool.query(`DELETE FROM projection_rebuilds WHERE projection = 'competitor-list'`);
    }
  });

  it('a projection whose version was bumped is rebuilt blue-green by the runner (shadow, then swap with the new version)', async () => {
    const bumped = { ...competitorListProjection, version: competitorListProjection.version + 1 };
    await db.pool.query(`UPDATE competitor_list SET name = 'stale' WHERE rank = 1`);
    const { ProjectionRunner } = await import('#projections/runner.ts');
    const { silentLog } = await import('#tests/support/runtime-pieces.ts');
    const upgraded = new ProjectionRunner({ db, store, projections: [bumped], log: silentLog });
    await upgraded.catchUp(bumped);
    const { rows } = await db.pool.query<{ version: number }>(
      `SELECT version FROM projection_checkpoints WHERE projection = 'competitor-list'`,
    );
    expect(rows[0]?.version).toBe(bumped.version);
    const { rows: stale } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM competitor_list WHERE name = 'stale'`,
    );
    expect(stale[0]?.n).toBe(0);
    // Back to the code's version for the other tests.
    await rebuildProjections(db, store, [competitorListProjection]);
  });
});

/** Runs the CLI against a Postgres database (scaled mode needs a session secret). */
function startCli(url: string, args: string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'web/cli.server.ts', ...args], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: url,
      SESSION_SECRET: 'x'.repeat(40),
      LOG_LEVEL: 'warn',
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
  }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}

// Real processes against a real server (the embedded database is one process's alone).
describe.each(databaseBackends.filter((b) => b === 'postgres'))('a rebuild killed midway (%s, CLI)', () => {
  let db: TestDatabase;
  let store: EventStore;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    let runner: ProjectionRunner;
    ({ store, runner } = await writeSide(db));
    await seedCompetitors(db.pool, store, { count: 2_000, seed: 5 });
    for (const p of allProjections) await runner.catchUp(p);
  });
  afterAll(async () => db.drop());

  it('resumes from its shadow checkpoint after SIGKILL and ends equal to a fresh rebuild', async () => {
    const url = db.url as string;
    const first = startCli(url, ['replay', '--batch-size', '100']);
    // Kill it once some, but not all, batches are committed into the shadows.
    let killedAt = 0;
    for (;;) {
      const { rows } = await db.pool.query<{ position: number }>(
        `SELECT min(position) AS position FROM projection_rebuilds`,
      );
      const at = rows[0]?.position ?? 0;
      if (at > 0) {
        first.child.kill('SIGKILL');
        killedAt = at;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const killed = await first.done;
    expect(killed.signal).toBe('SIGKILL');
    const { rows: head } = await db.pool.query<{ head: number }>(
      'SELECT max(position)::int AS head FROM events',
    );
    expect(killedAt).toBeLessThan(head[0]?.head ?? 0);

    const resumed = await startCli(url, ['replay', '--json']).done;
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(/Resuming the interrupted rebuild of competitor-list from position \d+/);
    const summary = JSON.parse(resumed.stdout.trim().split('\n').at(-1) ?? '{}') as {
      projections: { projection: string; resumedFrom: number | null }[];
    };
    expect(summary.projections.every((p) => p.resumedFrom !== null)).toBe(true);

    // A fresh rebuild (from the first event) compared with what the resumed one swapped in.
    const fresh = await startCli(url, ['replay', '--dry-run', '--restart', '--json']).done;
    expect(fresh.code).toBe(0);
    const compared = JSON.parse(fresh.stdout.trim().split('\n').at(-1) ?? '{}') as {
      projections: { projection: string; differences: number }[];
    };
    expect(compared.projections.map((p) => [p.projection, p.differences])).toEqual(
      allProjections.map((p) => [p.name, 0]),
    );
  });

  it('refuses a concurrent rebuild of the same projection from another process, naming the holder', async () => {
    const lease = await takeRebuildLease(db, ['audit-log']);
    try {
      await db.pool.query(
        `INSERT INTO projection_rebuilds (projection, version, holder) VALUES ('audit-log', 1, 'someone@elsewhere pid 7')`,
      );
      const refused = await startCli(db.url as string, ['replay', '--projection', 'audit-log']).done;
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('audit-log is already being rebuilt by someone@elsewhere pid 7');
    } finally {
      await lease.release();
      await db.pool.query(`DELETE FROM projection_rebuilds WHERE projection = 'audit-log'`);
    }
  });
});
