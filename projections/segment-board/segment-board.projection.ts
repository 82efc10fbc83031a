import type { Recorded } from '#events/envelope.ts';
import { applyMove } from '#events/ordering/apply-move.ts';
import { orderingEventTypes, type OrderingEvent } from '#events/ordering/events.ts';
import type { SegmentEvent } from '#events/segment/events.ts';
import { orderingStream } from '#events/streams.ts';
import type { Queryable } from '#infra/db/database.ts';
import { defineProjection } from '../projection.ts';

/**
 * The segments, in board order, and the version of the ordering stream that order reflects: every
 * ordering event moves it, so the board page can tell whether its segment order is as new as the
 * competitors' order it shows beside it (web/pages/ordering).
 * Version 3: text composed (NFC) as events are now read, so names and notes typed with combining
 * accents are found by a search typed the other way (decision 0024).
 */
export const segmentBoardProjection = defineProjection({
  name: 'segment-board',
  version: 3,
  tables: ['segment_board', 'segment_board_order'],
  handles: ['SegmentAdded', ...orderingEventTypes],

  async apply(db, events, tables) {
    // In log order: additions in runs, each reorder on the positions as they stand.
    let added: Recorded<SegmentEvent>[] = [];
    for (const event of events) {
      if (event.type === 'SegmentAdded') added.push(event as Recorded<SegmentEvent>);
      else if (event.type === 'SegmentsReordered') {
        await addSegments(db, added, tables.segment_board);
        added = [];
        await reorder(
          db,
          (event as Recorded<OrderingEvent & { type: 'SegmentsReordered' }>).data.moves,
          tables.segment_board,
        );
      }
    }
    await addSegments(db, added, tables.segment_board);
    const versions = events.filter((e) => e.stream === orderingStream()).map((e) => e.streamVersion);
    if (versions.length > 0) {
      await db.query(
        `INSERT INTO ${tables.segment_board_order} (id, version) VALUES (true, $1)
         ON CONFLICT (id) DO UPDATE SET version = greatest(${tables.segment_board_order}.version, EXCLUDED.version)`,
        [Math.max(...versions)],
      );
    }
  },
});

async function addSegments(db: Queryable, added: Recorded<SegmentEvent>[], table: string): Promise<void> {
  if (added.length === 0) return;
  await db.query(
    `INSERT INTO ${table} (id, name, position)
       SELECT * FROM unnest($1::text[], $2::text[], $3::int[])
       ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, position = EXCLUDED.position`,
    [added.map((e) => e.data.segmentId), added.map((e) => e.data.name), added.map((e) => e.data.position)],
  );
}

/** The moves, applied as the ordering decider folds them; positions become 1..n in the new order. */
async function reorder(db: Queryable, moves: readonly { segmentId: string; to: number }[], table: string) {
  const { rows } = await db.query<{ id: string }>(`SELECT id FROM ${table} ORDER BY position, id`);
  const list = rows.map((r) => r.id);
  for (const move of moves) applyMove(list, move.segmentId, move.to);
  await db.query(
    `UPDATE ${table} s SET position = x.position FROM unnest($1::text[]) WITH ORDINALITY AS x(id, position)
     WHERE s.id = x.id`,
    [list],
  );
}
