import { randomUUID } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { systemActor } from '#events/envelope.ts';
import type { EventLogWriter } from '#events/store/event-log-writer.ts';
import { competitorNameStream, competitorStream } from '#events/streams.ts';
import type { Queryable } from '#infra/db/database.ts';
import { demoCompetitorEvents, random } from './demo-generator.ts';

export interface SeedOptions {
  count: number;
  /** Competitors per statement (default 1,000). */
  batchSize?: number;
  seed?: number;
  onProgress?: (done: number) => void;
  /** Stops between batches once aborted: what was added is every batch stored so far, each whole. */
  signal?: AbortSignal;
}

/**
 * The bulk path for demo data: the same events the AddCompetitor and UpdateCompetitorNote commands
 * would append (name claim, competitor added, notes), written a thousand competitors per statement.
 * Names already taken are skipped over, so seeding twice adds more rather than failing. Returns how
 * many were added: fewer than asked when `signal` stopped it.
 */
export async function seedCompetitors(
  db: Queryable,
  store: EventLogWriter,
  options: SeedOptions,
): Promise<number> {
  const batchSize = options.batchSize ?? 1_000;
  const r = random(options.seed ?? Date.now());
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM event_streams WHERE stream LIKE 'competitor-name-%'`,
  );
  let n = rows[0]?.n ?? 0;
  let added = 0;
  const at = new Date().toISOString();
  while (added < options.count && !options.signal?.aborted) {
    const size = Math.min(batchSize, options.count - added);
    let batch = Array.from({ length: size }, () => demoCompetitorEvents(n++, randomUUID(), r));
    const taken = await db.query<{ stream: string }>(
      'SELECT stream FROM event_streams WHERE stream = ANY($1)',
      [batch.map((c) => competitorNameStream(c.name))],
    );
    const takenSet = new Set(taken.rows.map((t) => t.stream));
    batch = batch.filter((c) => !takenSet.has(competitorNameStream(c.name)));
    if (batch.length === 0) continue;
    await store.appendNewStreams(
      batch.flatMap((c) => [
        {
          stream: competitorNameStream(c.name),
          events: [c.nameClaim],
          commandId: `seed:${c.competitorId}:claim`,
        },
        {
          stream: competitorStream(c.competitorId),
          events: c.competitorEvents,
          commandId: `seed:${c.competitorId}`,
        },
      ]),
      { actor: systemActor, correlationId: `seed:${at}`, at },
    );
    added += batch.length;
    options.onProgress?.(added);
    // A turn of the event loop between batches: on the embedded database the statements alone never
    // yield to it, so a Ctrl-C would wait for the whole seed.
    await nextTurn();
  }
  return added;
}
