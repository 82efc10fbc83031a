import { describe, expect, it } from 'vitest';
import type { CommandRouter } from '#services/command-router.ts';
import { bootstrapContent } from '#services/bootstrap/bootstrap.ts';
import { demoCompetitors } from '#services/bootstrap/demo-competitors.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { addCompetitorCommand, envelope, writeSide } from '#tests/support/runtime-pieces.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';

/**
 * The first start's content (default segments, demo competitors). A first start can be killed half-way
 * (Ctrl+C, a crash, a laptop lid): the next start must finish it, and must never pour demo data into an
 * install someone has used.
 */
describe.each(databaseBackends)('the first start content on %s', (backend) => {
  const count = async (db: TestDatabase, type: string) =>
    (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE type = $1', [type]))
      .rows[0]?.n;

  /** A router that stops working after `commands` commands, as a start killed half-way. */
  const dyingAfter = (route: CommandRouter, commands: number): CommandRouter => {
    let left = commands;
    return async (command) => {
      if (left-- <= 0) throw new Error('killed');
      return route(command);
    };
  };

  it.each([2, 6, 9])('a first start killed after %i commands is completed by the next', async (commands) => {
    const db = await createTestDatabase(backend);
    try {
      const { store, route } = await writeSide(db, { segments: false });
      await expect(bootstrapContent(store, dyingAfter(route, commands), { demoData: true })).rejects.toThrow(
        'killed',
      );
      await bootstrapContent(store, route, { demoData: true });
      expect(await count(db, 'CompetitorAdded')).toBe(demoCompetitors.length);
      expect(await count(db, 'SegmentAdded')).toBe(4);
    } finally {
      await db.drop();
    }
  });

  it('an install someone has used gets no demo data, even with DEMO_DATA on', async () => {
    const db = await createTestDatabase(backend);
    try {
      const { store, route } = await writeSide(db, { segments: false });
      await bootstrapContent(store, route, { demoData: false });
      expect((await route(envelope(addCompetitorCommand('Our own')))).status).toBe('accepted');
      await bootstrapContent(store, route, { demoData: true });
      expect(await count(db, 'CompetitorAdded')).toBe(1);
    } finally {
      await db.drop();
    }
  });
});
