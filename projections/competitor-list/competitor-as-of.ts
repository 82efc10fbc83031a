import type { CompetitorEvent } from '#events/competitor/events.ts';
import type { Recorded } from '#events/envelope.ts';
import type { EventLogReader } from '#events/store/event-log-reader.ts';
import { competitorStream } from '#events/streams.ts';
import type { Queryable } from '#infra/db/database.ts';
import { evolveCompetitorRow, type CompetitorRow } from './competitor-row.ts';

/**
 * The competitor as it was at `at`, folded from its own events recorded up to then with the same pure
 * function the live projection uses. Rank is a property of the whole list, so it is not reconstructed (0).
 * Undefined when the competitor did not exist (yet, or any more) at that moment.
 */
export async function competitorAsOf(
  store: EventLogReader,
  db: Queryable,
  competitorId: string,
  at: Date,
): Promise<CompetitorRow | undefined> {
  const { events } = await store.readStream(competitorStream(competitorId));
  const { rows } = await db.query<{ id: string; name: string }>('SELECT id, name FROM segment_board');
  const segments = new Map(rows.map((r) => [r.id, r.name]));
  let row: CompetitorRow | null | undefined;
  for (const event of events as Recorded<CompetitorEvent>[]) {
    if (event.recordedAt > at) break;
    row = evolveCompetitorRow(row, event, { segmentName: (id) => segments.get(id) ?? id, nextRank: () => 0 });
  }
  return row ?? undefined;
}
