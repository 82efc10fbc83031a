import type { Recorded } from '#events/envelope.ts';
import type { SegmentEvent } from '#events/segment/events.ts';
import { defineProjection } from '../projection.ts';

/** The segments, in board order. */
export const segmentBoardProjection = defineProjection({
  name: 'segment-board',
  version: 1,
  tables: ['segment_board'],
  handles: ['SegmentAdded'],

  async apply(db, events, tables) {
    const added = events.filter((e) => e.type === 'SegmentAdded') as Recorded<SegmentEvent>[];
    if (added.length === 0) return;
    await db.query(
      `INSERT INTO ${tables.segment_board} (id, name, position)
       SELECT * FROM unnest($1::text[], $2::text[], $3::int[])
       ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, position = EXCLUDED.position`,
      [added.map((e) => e.data.segmentId), added.map((e) => e.data.name), added.map((e) => e.data.position)],
    );
  },
});
