import { competitorEventTypes, isCompetitorEvent } from '#events/competitor/events.ts';
import type { Recorded, RecordedEvent } from '#events/envelope.ts';
import { orderingEventTypes, type OrderingEvent } from '#events/ordering/events.ts';
import type { SegmentEvent } from '#events/segment/events.ts';
import type { Queryable } from '#infra/db/database.ts';
import { defineProjection, type TableNames } from '../projection.ts';
import {
  evolveCompetitorRow,
  eventsWithoutContext,
  type CompetitorRow,
  type RowContext,
} from './competitor-row.ts';
import { applyOrdering } from './competitor-list.ordering.ts';
import { loadRows, removeRanks, upsertRows } from './competitor-list.writer.ts';

type Tables = 'competitor_list' | 'competitor_list_segments' | 'competitor_list_order';

/**
 * The competitor table and battlecards. A batch is folded in memory (pure `evolveCompetitorRow`) over
 * the rows it touches, then written with one upsert and one rank compaction, so seeding a million
 * competitors costs a few statements per batch rather than one per event. Reorders (drag-sorting) are
 * applied in log order between runs of other changes.
 * Version 2: text composed (NFC) as events are now read, so names and notes typed with combining
 * accents are found by a search typed the other way (decision 0024).
 */
export const competitorListProjection = defineProjection({
  name: 'competitor-list',
  version: 2,
  tables: ['competitor_list', 'competitor_list_segments', 'competitor_list_order'],
  handles: [...competitorEventTypes, 'SegmentAdded', ...orderingEventTypes],

  async apply(db, events, tables, memo) {
    const segments = events.every((e) => eventsWithoutContext.has(e.type))
      ? undefined
      : await applySegments(db, events, tables);
    for (const run of runsOf(events)) {
      if (run.ordering)
        await applyOrdering(
          db,
          run.events as Recorded<OrderingEvent>[],
          tables,
          (id) => segments?.get(id) ?? id,
        );
      else await applyCompetitorEvents(db, run.events, tables, segments, memo);
    }
  },
});

const orderingTypes = new Set<string>(orderingEventTypes);

/** Consecutive events split into runs of reorders and runs of everything else. */
function runsOf(events: readonly RecordedEvent[]): { ordering: boolean; events: RecordedEvent[] }[] {
  const runs: { ordering: boolean; events: RecordedEvent[] }[] = [];
  for (const event of events) {
    const ordering = orderingTypes.has(event.type);
    const last = runs.at(-1);
    if (last?.ordering === ordering) last.events.push(event);
    else runs.push({ ordering, events: [event] });
  }
  return runs;
}

async function applyCompetitorEvents(
  db: Queryable,
  events: readonly RecordedEvent[],
  tables: TableNames<Tables>,
  segments: Map<string, string> | undefined,
  memo: Map<string, unknown> | undefined,
): Promise<void> {
  const competitorEvents = events.filter(isCompetitorEvent);
  if (competitorEvents.length === 0) return;

  const ids = [...new Set(competitorEvents.map((e) => e.data.competitorId))];
  const rows = new Map<string, CompetitorRow | null | undefined>(await loadRows(db, tables, ids));
  const existing = new Set(rows.keys());
  const removedRanks: number[] = [];
  // Rebuilding, the shadow table has no rank index yet: keep the highest rank between batches.
  let maxRank =
    (memo?.get('maxRank') as number | undefined) ?? (segments && (await currentMaxRank(db, tables)));
  const context: RowContext = {
    segmentName: (id) => (segments ?? contextSkipped()).get(id) ?? id,
    nextRank: () => (maxRank === undefined ? contextSkipped() : ++maxRank),
  };
  for (const event of competitorEvents) {
    const id = event.data.competitorId;
    const before = rows.get(id);
    const after = evolveCompetitorRow(before, event, context);
    if (after === null && before) removedRanks.push(before.rank);
    rows.set(id, after);
  }
  const changed = [...rows.values()].filter((r): r is CompetitorRow => !!r);
  const deleted = [...rows.entries()].filter(([id, r]) => r === null && existing.has(id)).map(([id]) => id);
  await upsertRows(db, tables, changed);
  await removeRanks(db, tables, deleted, removedRanks);
  // Ranks are 1..n without gaps: each removed rank closed one.
  if (maxRank !== undefined) memo?.set('maxRank', maxRank - removedRanks.length);
}

/** A batch judged not to need the context used it: `eventsWithoutContext` is wrong, fail loudly. */
function contextSkipped(): never {
  throw new Error('competitor-list: an event listed in eventsWithoutContext used the row context');
}

async function currentMaxRank(db: Queryable, tables: TableNames<Tables>): Promise<number> {
  const { rows } = await db.query<{ max: number | null }>(
    `SELECT max(rank) AS max FROM ${tables.competitor_list}`,
  );
  return rows[0]?.max ?? 0;
}

/** Keeps the projection's segment-name lookup current; returns it for this batch. */
async function applySegments(
  db: Queryable,
  events: readonly RecordedEvent[],
  tables: TableNames<Tables>,
): Promise<Map<string, string>> {
  const added = events.filter((e) => e.type === 'SegmentAdded') as Recorded<SegmentEvent>[];
  if (added.length > 0) {
    await db.query(
      `INSERT INTO ${tables.competitor_list_segments} (id, name)
       SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name`,
      [added.map((e) => e.data.segmentId), added.map((e) => e.data.name)],
    );
  }
  const { rows } = await db.query<{ id: string; name: string }>(
    `SELECT id, name FROM ${tables.competitor_list_segments}`,
  );
  return new Map(rows.map((r) => [r.id, r.name]));
}
