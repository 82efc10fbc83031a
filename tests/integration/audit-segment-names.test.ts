import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogProjection } from '#projections/audit-log/audit-log.projection.ts';
import { competitorListProjection } from '#projections/competitor-list/competitor-list.projection.ts';
import type { ProjectionRunner } from '#projections/runner.ts';
import { segmentBoardProjection } from '#projections/segment-board/segment-board.projection.ts';
import type { CommandRouter } from '#services/command-router.ts';
import { startChangeFeed } from '#web/realtime/change-feed.server.ts';
import type { ChangeMessage } from '#web/realtime/change-message.ts';
import type { Realtime } from '#web/realtime/realtime.server.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { addCompetitorCommand, envelope, silentLog, writeSide } from '#tests/support/runtime-pieces.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';
import { until } from '#tests/support/until.ts';

/*
 * Segments are named by id in events ("smb"); the audit log and the live notice showed the id: "Moved
 * Acme from the segment smb to enterprise". They show the segment's name now. The audit lines are
 * stored by the audit projection, so its version 2 names them, and an install built by version 1
 * rebuilds at its next start: its older lines get the names too.
 */
describe.each(databaseBackends)('segments by name in the audit log and live notices, on %s', (backend) => {
  let db: TestDatabase;
  let route: CommandRouter;
  let runner: ProjectionRunner;
  const sent: ChangeMessage[] = [];
  const add = addCompetitorCommand(`Segment Mover ${Date.now()}`, { segmentId: 'smb', threat: 'low' });
  const { competitorId, name } = add.payload;
  const moved = `Moved ${name} from the segment SMB to Enterprise`;

  const summaries = async () => {
    const { rows } = await db.pool.query<{ type: string; summary: string }>(
      `SELECT type, summary FROM audit_log
       WHERE competitor_id = $1 AND type IN ('CompetitorAdded', 'CompetitorMovedToSegment') ORDER BY position`,
      [competitorId],
    );
    return rows;
  };

  beforeAll(async () => {
    db = await createTestDatabase(backend);
    ({ route, runner } = await writeSide(db));
    const realtime = {
      broadcast: (_room: string, _event: string, message: ChangeMessage) => sent.push(message),
    };
    startChangeFeed(runner, realtime as unknown as Realtime, { db: db.pool, log: silentLog });
    await runner.catchUp(segmentBoardProjection);
    await route(envelope(add));
    await route(
      envelope({
        type: 'UpdateCompetitor',
        payload: { ...add.payload, segmentId: 'enterprise', baseSegmentId: 'smb' },
      }),
    );
    await runner.catchUp(competitorListProjection);
    // A transaction another test file holds open on the shared cluster holds every catch-up back
    // (decision 0002): catch up until both lines are there, not once.
    await until(async () => {
      await runner.catchUp(auditLogProjection);
      return (await summaries()).length >= 2;
    }, 'the audit log caught up');
  });
  afterAll(async () => {
    await runner.stop();
    await db.drop();
  });

  it('the audit log names the segments', async () => {
    expect(await summaries()).toEqual([
      { type: 'CompetitorAdded', summary: `Added ${name} (SMB, low threat)` },
      { type: 'CompetitorMovedToSegment', summary: moved },
    ]);
  });

  it('the live notice of the move names the segments', async () => {
    await until(() => sent.length > 0, 'the change feed');
    const changes = sent.flatMap((m) => m.changes).filter((c) => c.competitorId === competitorId);
    expect(changes.map((c) => c.summary)).toEqual([`Added ${name} (SMB, low threat)`, moved]);
  });

  it('an install whose audit log version 1 built (ids) gets the names when it starts', async () => {
    // As version 1 left it: lines with ids, the checkpoint at version 1, no segments remembered.
    await db.pool.query(
      `UPDATE audit_log SET summary = replace(replace(summary, 'SMB', 'smb'), 'Enterprise', 'enterprise')
       WHERE competitor_id = $1`,
      [competitorId],
    );
    await db.pool.query('DELETE FROM audit_log_segments');
    await db.pool.query(`UPDATE projection_checkpoints SET version = 1 WHERE projection = 'audit-log'`);
    expect((await summaries()).map((r) => r.summary)).toContain(
      `Moved ${name} from the segment smb to enterprise`,
    );

    await runner.start();
    await until(async () => {
      const { rows } = await db.pool.query<{ version: number }>(
        `SELECT version FROM projection_checkpoints WHERE projection = 'audit-log'`,
      );
      return rows[0]?.version === auditLogProjection.version;
    }, 'the audit log rebuilt for its new version');
    expect(await summaries()).toEqual([
      { type: 'CompetitorAdded', summary: `Added ${name} (SMB, low threat)` },
      { type: 'CompetitorMovedToSegment', summary: moved },
    ]);
  });
});
