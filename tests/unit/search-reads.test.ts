import { describe, expect, it } from 'vitest';
import type { Database } from '#infra/db/database.ts';
import { ServiceUnavailableError } from '#infra/errors.ts';
import { createSearchReads, SEARCH_BUSY_MESSAGE } from '#web/search-reads.server.ts';

/**
 * The embedded database's one connection, faked: each statement answers when the test says so, and the
 * order statements reached it is recorded. The gate gives the embedded database one search statement
 * at a time (docs/decisions/0026).
 */
function fakeEmbedded() {
  const reached: string[] = [];
  const pending = new Map<string, () => void>();
  const pool = {
    query: (sql: string) =>
      new Promise((resolve) => {
        reached.push(sql);
        pending.set(sql, () => resolve({ rows: [] }));
      }),
  };
  const answer = async (sql: string) => {
    while (!pending.has(sql)) await new Promise((resolve) => setImmediate(resolve));
    pending.get(sql)?.();
  };
  return { db: { kind: 'embedded', pool } as unknown as Database, reached, answer };
}

describe('searched reads take turns', () => {
  it('a search keeps its turn through all its statements: the next search starts after it', async () => {
    const { db, reached, answer } = fakeEmbedded();
    const reads = createSearchReads(db, 60_000);
    const first = reads.run(true, async (q) => {
      await q.query('first 1');
      await q.query('first 2');
    });
    const second = reads.run(true, (q) => q.query('second 1'));
    await answer('first 1');
    await answer('first 2');
    await answer('second 1');
    await Promise.all([first, second]);
    expect(reached).toEqual(['first 1', 'first 2', 'second 1']);
  });

  it('a search that cannot get its turn in time answers 503 "busy"; unsearched reads never wait', async () => {
    const { db, reached, answer } = fakeEmbedded();
    const reads = createSearchReads(db, 100);
    const holding = reads.run(true, (q) => q.query('holding'));
    const refused = await reads.run(true, (q) => q.query('refused')).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ServiceUnavailableError);
    expect((refused as Error).message).toBe(SEARCH_BUSY_MESSAGE);
    const unsearched = reads.run(false, (q) => q.query('unsearched'));
    await answer('unsearched');
    await unsearched;
    await answer('holding');
    await holding;
    expect(reached).toEqual(['holding', 'unsearched']);
  });
});
