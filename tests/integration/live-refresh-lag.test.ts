import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLogProjection } from '#projections/audit-log/audit-log.projection.ts';
import { competitorListProjection } from '#projections/competitor-list/competitor-list.projection.ts';
import { noteHistoryProjection } from '#projections/note-history/note-history.projection.ts';
import { segmentBoardProjection } from '#projections/segment-board/segment-board.projection.ts';
import { compareMarks, earlierMark } from '#web/realtime/live-mark.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { envelope } from '#tests/support/runtime-pieces.ts';
import { readBoard } from '#tests/support/segment-board.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';
import type { TestClient } from '#tests/support/test-client.ts';

/**
 * Browsers hear of a change once the competitor list has projected it, and then refetch what they show.
 * The note history and the audit log are other read models, projected on their own: a live refresh of
 * those pages must not read them before they have caught up, or it shows the page as it was and nothing
 * brings the change later (the page's position says it is up to date). The segment board's order of
 * segments is one too: shown stale, the page's next drop is refused and the board reloads.
 */
describe.each(databaseBackends)(
  'a live refresh of the history, audit and segments pages on %s',
  (backend) => {
    let app: TestApp;
    let admin: TestClient;

    beforeAll(async () => {
      app = await startTestApp(backend);
      admin = await app.client('admin');
    });
    afterAll(() => app.close());

    /** A read model's checkpoint, as a live mark (live-mark.ts). */
    const checkpointOf = async (projection: string) => {
      const { rows } = await app.db.pool.query<{ mark: string }>(
        `SELECT transaction_id::text || ':' || position AS mark FROM projection_checkpoints WHERE projection = $1`,
        [projection],
      );
      return rows[0]?.mark ?? '';
    };

    it('waits until their read models have caught up with the competitor list', async () => {
      const runner = app.runtime.runner;
      if (!runner) throw new Error('the test app projects');
      const { rows } = await app.db.pool.query<{ id: string }>('SELECT id FROM competitor_list LIMIT 1');
      const id = rows[0]?.id ?? '';
      const text = `Lagging-note-${Date.now()}`;
      await runner.stop();
      try {
        await app.runtime.route(
          envelope({
            type: 'UpdateCompetitorNote',
            payload: { competitorId: id, column: 'pricing', value: text },
          }),
        );
        // The list has it (so the browsers are told); the history and the audit log not yet.
        await runner.catchUp(competitorListProjection);
        const history = admin.get(`/competitors/${id}/history`, { xhr: true });
        const audit = admin.get('/audit', { xhr: true });
        await sleep(300);
        await runner.catchUp(noteHistoryProjection);
        await runner.catchUp(auditLogProjection);
        expect(await (await history).text()).toContain(text);
        expect(await (await audit).text()).toContain(text);
      } finally {
        await runner.start();
      }
    });

    it('a page opened by hand while its read models lag says it stands where they stand', async () => {
      const runner = app.runtime.runner;
      if (!runner) throw new Error('the test app projects');
      const { rows } = await app.db.pool.query<{ id: string }>('SELECT id FROM competitor_list LIMIT 1');
      const id = rows[0]?.id ?? '';
      await runner.stop();
      try {
        await app.runtime.route(
          envelope({
            type: 'UpdateCompetitorNote',
            payload: { competitorId: id, column: 'general', value: `Lagging-page-${Date.now()}` },
          }),
        );
        // The list has it; the history, the audit log and the board not yet.
        await runner.catchUp(competitorListProjection);
        const list = await checkpointOf('competitor-list');
        for (const [path, slowest] of [
          [`/competitors/${id}/history`, ['note-history', 'audit-log']],
          ['/audit', ['audit-log']],
          ['/segments', ['segment-board']],
        ] as const) {
          const html = await (await admin.get(path)).text();
          const rendered = /<meta name="live-position" content="([\d:]+)"/.exec(html)?.[1];
          const models = (await Promise.all(slowest.map(checkpointOf))).reduce(earlierMark);
          expect(compareMarks(models, list), path).toBeLessThan(0);
          // Where its data stands, not the list: its first head check finds the list further on.
          expect(rendered, path).toBe(models);
        }
        const html = await (await admin.get('/competitors')).text();
        expect(html).toContain(`<meta name="live-position" content="${list}"`);
      } finally {
        await runner.start();
      }
    });

    it('/segments waits until the board has the new order of segments', async () => {
      const runner = app.runtime.runner;
      if (!runner) throw new Error('the test app projects');
      const before = await readBoard(admin);
      const reversed = [...before.groups].reverse();
      await runner.stop();
      try {
        const outcome = await app.runtime.route(
          envelope({
            type: 'ReorganizeSegments',
            payload: {
              groups: reversed.map((g, i) => ({
                order: i + 1,
                value: g.id,
                items: g.items.map((value, j) => ({ order: j + 1, value })),
              })),
              expectedVersion: before.version,
            },
          }),
        );
        expect(outcome.status).toBe('accepted');
        // The list has the move (so the browsers are told); the board's order of segments not yet.
        await runner.catchUp(competitorListProjection);
        const refresh = admin.get('/segments', { xhr: true });
        await sleep(300);
        await runner.catchUp(segmentBoardProjection);
        const html = await (await refresh).text();
        const shown = [...html.matchAll(/class="note-card sortable-group"[^>]*data-id="([^"]+)"/g)].map(
          (m) => m[1],
        );
        expect(shown).toEqual(reversed.map((g) => g.id));
      } finally {
        await runner.start();
      }
    });
  },
);
