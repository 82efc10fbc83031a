import type { CompetitorEvent } from '#events/competitor/events.ts';
import { acceptedAt, type Recorded, type RecordedEvent } from '#events/envelope.ts';
import type { OrderingEvent } from '#events/ordering/events.ts';
import type { EventLogReader } from '#events/store/event-log-reader.ts';
import { competitorStream, orderingStream } from '#events/streams.ts';
import type { Queryable } from '#infra/db/database.ts';
import { evolveCompetitorRow, type CompetitorRow } from './competitor-row.ts';

type Moved = Recorded<Extract<OrderingEvent, { type: 'CompetitorMovedToSegment' }>>;

/**
 * The competitor as it was at `at`, folded from its own events accepted up to then with the same pure
 * function the live projection uses, and its board moves (the ordering stream) in log order between
 * them. "Then" is on the clock the pages show: when the command was accepted (`metadata.at`), not when
 * a worker stored it, which can be much later (docs/decisions/0020-as-of-on-the-accepted-clock.md). Rank is a property of the whole list, so it is not reconstructed (0: the card shows none).
 * Undefined when the competitor did not exist (yet, or any more) at that moment.
 */
export async function competitorAsOf(
  store: EventLogReader,
  db: Queryable,
  competitorId: string,
  at: Date,
): Promise<CompetitorRow | undefined> {
  const [{ events }, moves] = await Promise.all([
    store.readStream(competitorStream(competitorId)),
    store.readAbout(orderingStream(), 'CompetitorMovedToSegment', competitorId),
  ]);
  const { rows } = await db.query<{ id: string; name: string }>('SELECT id, name FROM segment_board');
  const segments = new Map(rows.map((r) => [r.id, r.name]));
  const segmentName = (id: string) => segments.get(id) ?? id;
  const until = (list: readonly RecordedEvent[]) => list.filter((e) => acceptedAt(e) <= at.getTime());
  const steps = [...until(events), ...until(moves)].sort((a, b) => a.position - b.position);
  let row: CompetitorRow | null | undefined;
  for (const event of steps) {
    if (event.type === 'CompetitorMovedToSegment') {
      // As the live list applies a move (competitor-list.ordering.ts).
      const { toSegmentId } = (event as Moved).data;
      if (row)
        row = {
          ...row,
          segmentId: toSegmentId,
          segmentName: segmentName(toSegmentId),
          updatedAt: event.metadata.at,
        };
    } else {
      row = evolveCompetitorRow(row, event as Recorded<CompetitorEvent>, { segmentName, nextRank: () => 0 });
    }
  }
  return row ?? undefined;
}
