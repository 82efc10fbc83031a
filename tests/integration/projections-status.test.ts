import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockDataDir } from '#infra/db/data-dir-lock.ts';
import { openEmbeddedDatabase } from '#infra/db/open-embedded.ts';
import { competitorListProjection } from '#projections/competitor-list/competitor-list.projection.ts';
import { cli } from '#tests/support/run-cli.ts';

/**
 * `projections:status` during a rolling upgrade, run with the previous version's code: a projection
 * the newer version built was shown "(will rebuild: code version changed)", yet this version never
 * rebuilds it back (the runner leaves it to the newer instances, decision in projections/runner.ts).
 */
describe('projections:status', { timeout: 240_000 }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rivals-status-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  async function query(sql: string): Promise<void> {
    const lock = await lockDataDir(dir, 'the projections:status test');
    const db = await openEmbeddedDatabase(dir);
    try {
      await db.pool.query(sql);
    } finally {
      await db.close();
      await lock.release();
    }
  }

  const lineOf = (stdout: string, name: string) =>
    stdout.split('\n').find((line) => line.startsWith(`${name} `)) ?? '';

  it('says which version built each projection, and what this version will do about it', async () => {
    expect((await cli(dir, ['seed', '--competitors', '3', '--seed', '1'])).code).toBe(0);
    const name = competitorListProjection.name;
    await query(`UPDATE projection_checkpoints SET version = version + 1 WHERE projection = '${name}'`);
    const newer = await cli(dir, ['projections:status']);
    expect(newer.code).toBe(0);
    expect(lineOf(newer.stdout, name)).not.toContain('will rebuild');
    expect(lineOf(newer.stdout, name)).toContain(
      `(built by a newer version of Rivals, v${competitorListProjection.version + 1}: left to it)`,
    );
    await query(`UPDATE projection_checkpoints SET version = version - 2 WHERE projection = '${name}'`);
    const older = await cli(dir, ['projections:status']);
    expect(lineOf(older.stdout, name)).toContain(
      `(will rebuild: built as v${competitorListProjection.version - 1}, the code has v${competitorListProjection.version})`,
    );
    expect(lineOf(older.stdout, 'audit-log')).not.toContain('(');
  });
});
