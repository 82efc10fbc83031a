import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Command } from '#events/command.ts';
import { noteColumns, type NoteColumn } from '#events/competitor/fields.ts';
import type { Actor } from '#events/envelope.ts';
import type { EventStore } from '#events/store/event-store.ts';
import { competitorStream } from '#events/streams.ts';
import { noteHistoryProjection } from '#projections/note-history/note-history.projection.ts';
import { rebuildProjections } from '#projections/rebuild/rebuild.ts';
import { ProjectionRunner } from '#projections/runner.ts';
import type { CommandRouter } from '#services/command-router.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { envelope, silentLog, writeSide } from '#tests/support/runtime-pieces.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';

/**
 * Property: the live note-history read model equals the one rebuilt from the events, for random
 * sequences of adds, note updates (same text again, stale versions, several authors) and deletes,
 * caught up in batches of any size, part-way or at the end. Checked three ways: against a replay into
 * shadow tables, against the chain of values in each competitor's own events, and against a small
 * model of what each command should have done.
 */

const slots = 2;
const actors: Actor[] = [
  { id: 'u-ada', name: 'Ada' },
  { id: 'u-grace', name: 'Grace Hopper' },
  { id: 'u-linus', name: 'Linus' },
];

/** Few distinct texts, so the same text is saved again often; plus arbitrary non-blank text. */
const noteText = fc.oneof(
  fc.constantFrom('alpha', 'alpha beta', 'beta gamma delta', 'line one\nline two', '<b>bold</b> & "quoted"'),
  fc.string({ minLength: 1, maxLength: 40 }).filter((v) => v.trim() !== ''),
);

const step = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('add' as const), slot: fc.nat(slots - 1) }) },
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('note' as const),
      slot: fc.nat(slots - 1),
      // Two columns most of the time, so chains get long; all four sometimes.
      column: fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom<NoteColumn>('pricing', 'strengths') },
        { weight: 1, arbitrary: fc.constantFrom(...noteColumns) },
      ),
      value: noteText,
      // The version the "dialog" opened with: none (last write wins), the current one, or a stale one.
      expected: fc.constantFrom('none', 'current', 'current', 'stale'),
      actor: fc.nat(actors.length - 1),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), slot: fc.nat(slots - 1) }) },
);
type Step = typeof step extends fc.Arbitrary<infer T> ? T : never;

/** Five saves of one note in a row: a chain the checks below must see at least once. */
const longChain: Step[] = Array.from({ length: 5 }, (_, i) => ({
  kind: 'note' as const,
  slot: 0,
  column: 'pricing' as const,
  value: `Pricing, version ${i + 1}`,
  expected: 'current' as const,
  actor: i % actors.length,
}));

interface HistoryRow {
  competitorId: string;
  column: string;
  noteVersion: number;
  value: string;
  previousValue: string;
  actorName: string;
}

/** What each step should do, independently of the decider: the note versions it must add to history. */
class Model {
  private readonly status = new Map<string, 'live' | 'deleted'>();
  private readonly notes = new Map<string, { value: string; version: number }>();
  readonly rows: HistoryRow[] = [];

  /** The version a dialog would send for this step: none, the current one, or one that is stale. */
  expectedVersion(s: Step, competitorId: string): number | undefined {
    if (s.kind !== 'note' || s.expected === 'none') return undefined;
    const version = this.notes.get(`${competitorId}:${s.column}`)?.version ?? 0;
    return s.expected === 'current' ? version : version > 0 ? version - 1 : version + 1;
  }

  /** Returns whether the command should be accepted. */
  apply(s: Step, competitorId: string, expected: number | undefined): boolean {
    const status = this.status.get(competitorId);
    switch (s.kind) {
      case 'add':
        if (status) return false;
        this.status.set(competitorId, 'live');
        return true;
      case 'delete':
        if (!status) return false;
        this.status.set(competitorId, 'deleted');
        return true;
      case 'note': {
        if (status !== 'live') return false;
        const key = `${competitorId}:${s.column}`;
        const note = this.notes.get(key) ?? { value: '', version: 0 };
        if (expected !== undefined && expected !== note.version) return false;
        if (note.value === s.value) return true;
        const next = { value: s.value, version: note.version + 1 };
        this.notes.set(key, next);
        this.rows.push({
          competitorId,
          column: s.column,
          noteVersion: next.version,
          value: s.value,
          previousValue: note.value,
          actorName: actors[s.actor]?.name ?? '',
        });
        return true;
      }
    }
  }
}

function toCommand(s: Step, competitorId: string, name: string, expected: number | undefined): Command {
  switch (s.kind) {
    case 'add':
      return {
        type: 'AddCompetitor',
        payload: { competitorId, name, website: null, segmentId: 'smb', threat: 'low', headquarters: null },
      };
    case 'note':
      return {
        type: 'UpdateCompetitorNote',
        payload: { competitorId, column: s.column, value: s.value, expectedNoteVersion: expected },
      };
    case 'delete':
      return { type: 'DeleteCompetitor', payload: { competitorId } };
  }
}

const byKey = (a: HistoryRow, b: HistoryRow) =>
  a.competitorId.localeCompare(b.competitorId) ||
  a.column.localeCompare(b.column) ||
  a.noteVersion - b.noteVersion;

describe.each(databaseBackends)('note history: live equals rebuilt on %s', (backend) => {
  let db: TestDatabase;
  let store: EventStore;
  let route: CommandRouter;
  let runner: ProjectionRunner;

  beforeAll(async () => {
    db = await createTestDatabase(backend);
    ({ store, route, runner } = await writeSide(db));
  });
  afterAll(async () => db?.drop());

  /** The live rows of these competitors, as stored. */
  async function liveRows(ids: string[]) {
    const { rows } = await db.pool.query<
      HistoryRow & { changedAt: Date; position: string | number; actorId: string; seq: string | number }
    >(
      `SELECT competitor_id AS "competitorId", column_name AS "column", note_version AS "noteVersion", value,
              previous_value AS "previousValue", actor_id AS "actorId", actor_name AS "actorName",
              changed_at AS "changedAt", position, seq
       FROM note_history WHERE competitor_id = ANY($1::uuid[])
       ORDER BY competitor_id, column_name, note_version`,
      [ids],
    );
    return rows;
  }

  /**
   * The same rows derived directly from each competitor's events: a chain of values per column, and
   * each change's place in the competitor's whole history (1, 2, … in the order of its stream).
   */
  async function rowsFromEvents(ids: string[]) {
    const rows: (HistoryRow & { actorId: string; changedAt: string; position: number; seq: number })[] = [];
    for (const id of ids) {
      const { events } = await store.readStream(competitorStream(id));
      const latest = new Map<string, { value: string; version: number }>();
      let seq = 0;
      for (const event of events) {
        if (event.type !== 'CompetitorNoteUpdated') continue;
        const data = event.data as {
          competitorId: string;
          column: string;
          value: string;
          noteVersion: number;
        };
        const before = latest.get(data.column) ?? { value: '', version: 0 };
        // Each event is the next version of its column.
        expect(data.noteVersion).toBe(before.version + 1);
        expect(data.competitorId).toBe(id);
        rows.push({
          competitorId: id,
          column: data.column,
          noteVersion: data.noteVersion,
          value: data.value,
          previousValue: before.value,
          actorId: event.metadata.actor.id,
          actorName: event.metadata.actor.name,
          changedAt: event.metadata.at,
          position: event.position,
          seq: ++seq,
        });
        latest.set(data.column, { value: data.value, version: data.noteVersion });
      }
    }
    return rows;
  }

  it('after random note updates, adds and deletes, the live history equals the rebuilt one (≥ 100 runs)', async () => {
    let run = 0;
    let historyRows = 0;
    let longestChain = 0;
    await fc.assert(
      fc.asyncProperty(
        // Some competitors exist before the random steps start (further adds of them are refused).
        fc.subarray(
          Array.from({ length: slots }, (_, slot) => ({ kind: 'add' as const, slot })),
          { minLength: 1 },
        ),
        fc.array(step, { minLength: 3, maxLength: 16 }),
        fc.constantFrom<number | 'default'>(1, 2, 5, 'default'),
        fc.nat(17),
        async (initial, randomSteps, batch, catchUpAt) => {
          const steps: Step[] = [...initial, ...randomSteps];
          run++;
          const ids = Array.from({ length: slots }, () => randomUUID());
          const model = new Model();
          const live =
            batch === 'default'
              ? runner
              : new ProjectionRunner({
                  db,
                  store,
                  projections: [noteHistoryProjection],
                  log: silentLog,
                  batchSize: batch,
                });

          for (const [i, s] of steps.entries()) {
            // Catch up part-way too: later batches must find the previous text in the table.
            if (i === catchUpAt) await live.catchUp(noteHistoryProjection);
            const id = ids[s.slot] as string;
            const actor = s.kind === 'note' ? actors[s.actor] : actors[0];
            const expected = model.expectedVersion(s, id);
            const outcome = await route(
              envelope(toCommand(s, id, `Slot ${s.slot} ${id}`, expected), actor ? { actor } : {}),
            );
            expect(outcome.status, JSON.stringify(s)).toBe(
              model.apply(s, id, expected) ? 'accepted' : 'rejected',
            );
          }
          await live.catchUp(noteHistoryProjection);

          const rows = await liveRows(ids);
          // 1. The model: exactly the versions it expects, each with the text it replaced.
          expect(
            rows.map(({ competitorId, column, noteVersion, value, previousValue, actorName }) => ({
              competitorId,
              column,
              noteVersion,
              value,
              previousValue,
              actorName,
            })),
          ).toEqual([...model.rows].sort(byKey));

          // 2. The events: per (competitor, column) the previous-value chain follows the events in order.
          const fromEvents = (await rowsFromEvents(ids)).sort(byKey);
          expect(
            rows.map((r) => ({
              ...r,
              changedAt: r.changedAt.toISOString(),
              position: Number(r.position),
              seq: Number(r.seq),
            })),
          ).toEqual(fromEvents.map((r) => ({ ...r, changedAt: new Date(r.changedAt).toISOString() })));
          for (const row of rows) {
            const previous = rows.find(
              (r) =>
                r.competitorId === row.competitorId &&
                r.column === row.column &&
                r.noteVersion === row.noteVersion - 1,
            );
            expect(row.previousValue).toBe(previous?.value ?? '');
            expect(previous === undefined).toBe(row.noteVersion === 1);
          }

          // 3. A replay of every event ever written into shadow tables equals the whole live table.
          const [rebuilt] = await rebuildProjections(db, store, [noteHistoryProjection], {
            dryRun: true,
            // Now and then in small batches, so the replay also splits chains across batches (the log
            // grows with every run, so mostly in one batch to keep the whole property fast).
            batchSize: run % 10 === 0 ? 7 : 10_000,
          });
          const { rows: total } = await db.pool.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM note_history',
          );
          expect(rebuilt?.events).toBe(total[0]?.n);
          expect(rebuilt?.differences).toBe(0);

          historyRows += rows.length;
          longestChain = Math.max(longestChain, ...rows.map((r) => r.noteVersion), 0);
        },
      ),
      // One history with a long chain always runs, whatever the random ones happen to produce.
      { numRuns: 100, examples: [[[{ kind: 'add', slot: 0 }], longChain, 'default', 2]] },
    );
    expect(run).toBeGreaterThanOrEqual(100);
    // The generator really produced histories worth comparing.
    expect(historyRows).toBeGreaterThan(150);
    expect(longestChain).toBeGreaterThanOrEqual(4);
  }, 180_000);
});
