import { randomUUID } from 'node:crypto';
import type pg from 'pg';

/** A note of the length people write: the payload of the plain-insert baselines and the note benches. */
export const benchNoteText = 'A note of ordinary length, as people write them in the notes dialog. '.repeat(
  2,
);

/** The baselines' table: the event row's payload with none of the event store's guarantees. */
export async function createPlainTable(db: { query(sql: string): Promise<unknown> }): Promise<void> {
  await db.query(
    `CREATE TABLE bench_plain (
       id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, stream text NOT NULL, type text NOT NULL,
       data jsonb NOT NULL, metadata jsonb NOT NULL, recorded_at timestamptz NOT NULL DEFAULT now())`,
  );
}

/** The baseline: batched 100-row `INSERT … SELECT FROM unnest(…)` commits by `writers` at once; rows/s. */
export async function batchedInserts(pool: pg.Pool, options: { seconds: number; writers: number }) {
  const stopAt = performance.now() + options.seconds * 1000;
  const started = performance.now();
  let rows = 0;
  const streams = Array.from({ length: 100 }, (_, i) => `competitor-bench-${i}`);
  const types = streams.map(() => 'CompetitorNoteUpdated');
  await Promise.all(
    Array.from({ length: options.writers }, async () => {
      while (performance.now() < stopAt) {
        const data = streams.map((_, i) =>
          JSON.stringify({
            competitorId: randomUUID(),
            column: 'general',
            value: benchNoteText,
            noteVersion: i + 1,
          }),
        );
        const metadata = streams.map(() =>
          JSON.stringify({
            actor: { id: 'bench', name: 'Bench' },
            commandId: randomUUID(),
            correlationId: 'bench',
          }),
        );
        await pool.query(
          `INSERT INTO bench_plain (stream, type, data, metadata)
           SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::jsonb[])`,
          [streams, types, data, metadata],
        );
        rows += streams.length;
      }
    }),
  );
  return rows / ((performance.now() - started) / 1000);
}
