import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventStore } from '#events/store/event-store.ts';
import { lockDataDir } from '#infra/db/data-dir-lock.ts';
import { openEmbeddedDatabase } from '#infra/db/open-embedded.ts';
import { allProjections } from '#projections/all-projections.ts';
import { competitorListProjection } from '#projections/competitor-list/competitor-list.projection.ts';
import { listCompetitors } from '#projections/competitor-list/competitor-list.queries.ts';
import { RebuildBusyError, takeRebuildLease } from '#projections/rebuild/rebuild-lease.ts';
import { rebuildProjections } from '#projections/rebuild/rebuild.ts';
import type { ProjectionRunner } from '#projections/runner.ts';
import { seedCompetitors } from '#services/seed/seed-competitors.ts';
import { databaseBackends, type BackendKind } from '#tests/support/environment.ts';
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
    // Page statements are prepared per connection (infra/db/prepared.ts): one connection prepares them
    // on the old tables here and must read the new ones after the swap. The embedded pool is that one
    // connection; on Postgres it is a connection of its own, idle (no transaction) during the rebuild.
    await db.pool.query(`UPDATE competitor_list SET name = 'corrupted' WHERE rank = 1`);
    const own = db.url ? new pg.Client({ connectionString: db.url }) : undefined;
    await own?.connect();
    const reader = own ?? db.pool;
    const pages = () =>
      Promise.all(
        (['rank', 'name'] as const).map((column) =>
          listCompetitors(reader, { search: '', sort: { column, direction: 'asc' }, page: 1, perPage: 15 }),
        ),
      );
    const namesOf = (results: Awaited<ReturnType<typeof pages>>) =>
      results.map((r) => r.rows.map((row) => row.name));
    expect(namesOf(await pages()).flat()).toContain('corrupted');
    const summaries = await rebuildProjections(db, store, allProjections, { batchSize: 400 });
    expect(summaries.map((s) => s.projection)).toEqual(allProjections.map((p) => p.name));
    const list = summaries.find((s) => s.projection === 'competitor-list');
    expect(list?.rows).toBeGreaterThanOrEqual(300);
    const { rows } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM competitor_list WHERE name = 'corrupted'`,
    );
    expect(rows[0]?.n).toBe(0);
    try {
      const fresh = await pages();
      expect(namesOf(fresh).flat()).not.toContain('corrupted');
      const { rows: expected } = await db.pool.query<{ name: string }>(
        'SELECT name FROM competitor_list ORDER BY lower(name), id LIMIT 15',
      );
      expect(namesOf(fresh)[1]).toEqual(expected.map((r) => r.name));
    } finally {
      await own?.end();
    }
    const { rows: after } = await db.pool.query<{ indexname: string }>(
      `SELECT indexname FROM pg_indexes WHERE tablename = 'competitor_list' ORDER BY indexname`,
    );
    expect(after).toEqual(before);
    const { rows: ranks } = await db.pool.query<{ rank: number }>(
      'SELECT rank FROM competitor_list ORDER BY rank',
    );
    expect(ranks.map((r) => r.rank)).toEqual(ranks.map((_, i) => i + 1));
    // Every page index counts exactly the rebuilt rows (its buckets were built on the shadow), and no
    // shadow sort is left registered.
    const { rows: sorts } = await db.pool.query<{ bucket_table: string; table_name: string }>(
      'SELECT bucket_table, table_name FROM page_index_sorts ORDER BY bucket_table',
    );
    expect(sorts.filter((s) => s.table_name.endsWith('__shadow'))).toEqual([]);
    // Each table's triggers call its own compiled functions (migration 024); the shadow's went with it.
    const { rows: compiled } = await db.pool.query<{ table: string; fn: string }>(
      `SELECT c.relname AS table, p.proname AS fn FROM pg_trigger t
       JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid
       WHERE t.tgname = 'page_index_update' ORDER BY 1`,
    );
    expect(compiled).toEqual(
      ['audit_log', 'competitor_list', 'user_list'].map((table) => ({ table, fn: `${table}_pi_update` })),
    );
    const { rows: leftovers } = await db.pool.query(
      `SELECT proname FROM pg_proc WHERE proname LIKE '%\\_\\_shadow\\_pi\\_%'`,
    );
    expect(leftovers).toEqual([]);
    for (const sort of sorts) {
      const { rows: counts } = await db.pool.query<{ rows: number; counted: number }>(
        `SELECT (SELECT count(*) FROM ${sort.table_name})::int AS rows,
                (SELECT sum(pk_n) FROM ${sort.bucket_table})::int AS counted`,
      );
      expect(counts[0]?.counted, sort.bucket_table).toBe(counts[0]?.rows);
    }
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

    // A rolling upgrade: an instance still on the previous version neither rebuilds it back to its own
    // version (the two would undo each other's rebuild for as long as both run) nor writes to it.
    const previous = new ProjectionRunner({
      db,
      store,
      projections: [competitorListProjection],
      log: silentLog,
    });
    await expect(previous.catchUp(competitorListProjection, 2_000)).rejects.toThrow(
      `competitor-list is built by a newer version of Rivals (projection version ${bumped.version}, this process has ${competitorListProjection.version})`,
    );
    const { rows: after } = await db.pool.query<{ version: number }>(
      `SELECT version FROM projection_checkpoints WHERE projection = 'competitor-list'`,
    );
    expect(after[0]?.version).toBe(bumped.version);

    // Back to the code's version for the other tests.
    await rebuildProjections(db, store, [competitorListProjection]);
  });

  /*
   * A runner asked to stop (Ctrl+C, a rolling restart's SIGTERM) waited for the whole rebuild of a
   * projection whose version changed: the process's 10 s shutdown deadline then ended it with exit code 1
   * mid-rebuild ("shutdown took too long"), as helper-36 saw stopping the first start after an upgrade.
   */
  it('a runner stopped while it rebuilds a bumped projection stops after the batch under way; the next resumes it', async () => {
    await seedCompetitors(db.pool, store, { count: 2_000, seed: 9, batchSize: 500 });
    const bumped = { ...competitorListProjection, version: competitorListProjection.version + 1 };
    const { ProjectionRunner } = await import('#projections/runner.ts');
    const { silentLog } = await import('#tests/support/runtime-pieces.ts');
    const { until } = await import('#tests/support/until.ts');
    const rebuilt = async () =>
      (
        await db.pool.query<{ events: number }>(
          `SELECT events FROM projection_rebuilds WHERE projection = 'competitor-list'`,
        )
      ).rows[0]?.events ?? 0;
    const version = async () =>
      (
        await db.pool.query<{ version: number }>(
          `SELECT version FROM projection_checkpoints WHERE projection = 'competitor-list'`,
        )
      ).rows[0]?.version;
    const { rows: all } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events WHERE type = ANY($1::text[])`,
      [bumped.handles],
    );

    const stopped = new ProjectionRunner({ db, store, projections: [bumped], log: silentLog });
    await stopped.start();
    await until(async () => (await rebuilt()) > 0, 'the rebuild under way');
    await stopped.stop();
    expect(await version()).toBe(competitorListProjection.version);
    expect(await rebuilt()).toBeLessThan(all[0]?.n ?? 0);

    const next = new ProjectionRunner({ db, store, projections: [bumped], log: silentLog });
    await next.catchUp(bumped);
    expect(await version()).toBe(bumped.version);
    const { rows: listed } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM competitor_list`,
    );
    expect(listed[0]?.n).toBe(2_300);

    await rebuildProjections(db, store, [competitorListProjection]);
  });
});

/** Where the CLI processes find the database: a Postgres URL, or an embedded data folder. */
interface CliTarget {
  env: Record<string, string>;
  /** The Postgres database, open in this process too (none for the embedded folder). */
  db?: TestDatabase;
  /** A query from this process; on the embedded folder only while no CLI process holds it. */
  query<T>(sql: string): Promise<T[]>;
  cleanup(): Promise<void>;
}

async function cliTarget(backend: BackendKind): Promise<CliTarget> {
  if (backend === 'postgres') {
    const db = await createTestDatabase('postgres');
    return {
      // Scaled mode needs a session secret.
      env: { DATABASE_URL: db.url as string, SESSION_SECRET: 'x'.repeat(40) },
      db,
      query: async <T>(sql: string) => (await db.pool.query(sql)).rows as T[],
      cleanup: () => db.drop(),
    };
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rivals-rebuild-'));
  return {
    env: { DATA_DIR: dir },
    async query<T>(sql: string) {
      const lock = await lockDataDir(dir, 'the rebuild test');
      const db = await openEmbeddedDatabase(dir);
      try {
        return (await db.pool.query(sql)).rows as T[];
      } finally {
        await db.close();
        await lock.release();
      }
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Runs the CLI as an operator would; with `LOG_LEVEL=debug` it logs each committed rebuild batch. */
function startCli(target: CliTarget, args: string[], logLevel = 'warn') {
  const child = spawn(process.execPath, ['--import', 'tsx', 'web/cli.server.ts', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: logLevel, ...target.env },
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
  /**
   * Resolves at the first log line matching `line` (false if the process ends without one). Operator
   * commands log to standard error: their standard output is data (`events:export`, `replay --json`).
   */
  const saw = (line: RegExp) =>
    new Promise<boolean>((resolve) => {
      const found = () => stderr.split('\n').some((l) => line.test(l));
      const check = () => {
        if (!found()) return;
        child.stderr.off('data', check);
        resolve(true);
      };
      child.stderr.on('data', check);
      void done.then(() => resolve(found()));
    });
  return { child, done, saw };
}

const lastJson = <T>(stdout: string): T => JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as T;

// Real processes, as operators run them: on Postgres, and on an embedded data folder (which only one
// process may open at a time, so this test opens it only between the CLI runs).
describe.each(databaseBackends)('a rebuild killed midway (%s, CLI)', (backend) => {
  let target: CliTarget;

  beforeAll(async () => {
    target = await cliTarget(backend);
    const seeded = await startCli(target, ['seed', '--competitors', '600', '--seed', '5']).done;
    expect(seeded.code, seeded.stderr).toBe(0);
  }, 300_000);
  afterAll(async () => target.cleanup());

  it(
    'resumes from its shadow checkpoint after SIGKILL and ends equal to a fresh rebuild',
    {
      timeout: 300_000,
    },
    async () => {
      const first = startCli(target, ['replay', '--batch-size', '100'], 'debug');
      // Killed as soon as a batch of the competitor list is committed into its shadows (the log holds
      // dozens of batches).
      expect(await first.saw(/"projection":"competitor-list".*rebuild batch committed/)).toBe(true);
      first.child.kill('SIGKILL');
      const killed = await first.done;
      expect(killed.signal).toBe('SIGKILL');
      const [progress] = await target.query<{ at: number; head: number }>(
        `SELECT (SELECT position FROM projection_rebuilds WHERE projection = 'competitor-list')::int AS at,
              (SELECT max(position) FROM events)::int AS head`,
      );
      expect(progress?.at).toBeGreaterThan(0);
      expect(progress?.at).toBeLessThan(progress?.head ?? 0);

      const resumed = await startCli(target, ['replay', '--json']).done;
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toMatch(/Resuming the interrupted rebuild of competitor-list from position \d+/);
      const summary = lastJson<{ projections: { projection: string; resumedFrom: number | null }[] }>(
        resumed.stdout,
      );
      expect(summary.projections.every((p) => p.resumedFrom !== null)).toBe(true);

      // A fresh rebuild (from the first event) compared with what the resumed one swapped in.
      const fresh = await startCli(target, ['replay', '--dry-run', '--restart', '--json']).done;
      expect(fresh.code, fresh.stderr).toBe(0);
      const compared = lastJson<{ projections: { projection: string; differences: number }[] }>(fresh.stdout);
      expect(compared.projections.map((p) => [p.projection, p.differences])).toEqual(
        allProjections.map((p) => [p.name, 0]),
      );
    },
  );

  it('refuses a concurrent rebuild from another process, naming the holder', async () => {
    const db = target.db;
    if (db) {
      // Postgres: another process's rebuild of the same projection holds its lease.
      const lease = await takeRebuildLease(db, ['audit-log']);
      try {
        await db.pool.query(
          `INSERT INTO projection_rebuilds (projection, version, holder) VALUES ('audit-log', 1, 'someone@elsewhere pid 7')
           ON CONFLICT (projection) DO UPDATE SET holder = EXCLUDED.holder`,
        );
        const refused = await startCli(target, ['replay', '--projection', 'audit-log']).done;
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain('audit-log is already being rebuilt by someone@elsewhere pid 7');
      } finally {
        await lease.release();
        await db.pool.query(`DELETE FROM projection_rebuilds WHERE projection = 'audit-log'`);
      }
      return;
    }
    // Embedded: a second process cannot even open the folder while a rebuild has it; the refusal names
    // the process that holds it (here this test, holding the folder as a rebuild would).
    const lock = await lockDataDir(target.env.DATA_DIR as string, 'the command "replay"');
    try {
      const refused = await startCli(target, ['replay', '--projection', 'audit-log']).done;
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        `is in use by another Rivals process (pid ${process.pid}, the command "replay"`,
      );
    } finally {
      await lock.release();
    }
  });
});
