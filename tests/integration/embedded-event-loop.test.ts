import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction, type Database } from '#infra/db/database.ts';
import { openEmbeddedDatabase } from '#infra/db/open-embedded.ts';

/**
 * PGlite runs on the process's own thread and answers through promises only, so a run of statements
 * (a projection rebuilt for its new version at start, a catch-up) kept the event loop from ever reaching
 * its I/O: the server answered nothing, not even /healthz, until the run ended (found by helper-36's
 * upgrade review: 49 s without an answer while five projections rebuilt at 20k competitors).
 */
describe('the embedded database under a long run of statements', () => {
  let db: Database;
  let server: Server;
  let url = '';

  beforeAll(async () => {
    db = await openEmbeddedDatabase('memory://event-loop');
    await db.pool.query('CREATE TABLE run (n int)');
    server = createServer((_request, response) => response.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  }, 120_000);
  afterAll(async () => {
    server?.close();
    await db?.close();
  });

  async function answeredDuring(run: () => Promise<void>): Promise<string[]> {
    const order: string[] = [];
    const running = run().then(() => order.push('run ended'));
    const asking = fetch(url).then(async (response) => order.push(`answered ${await response.text()}`));
    await Promise.all([running, asking]);
    return order;
  }

  it('lets an HTTP request be answered before a run of single statements ends', async () => {
    const order = await answeredDuring(async () => {
      for (let n = 0; n < 400; n++) await db.pool.query('INSERT INTO run VALUES ($1)', [n]);
    });
    expect(order).toEqual(['answered ok', 'run ended']);
  });

  it('lets an HTTP request be answered before a run of transactions (a rebuild’s batches) ends', async () => {
    const order = await answeredDuring(async () => {
      for (let batch = 0; batch < 200; batch++)
        await withTransaction(db.pool, async (client) => {
          await client.query('INSERT INTO run VALUES ($1)', [batch]);
          await client.query('UPDATE run SET n = n + 1 WHERE n = $1', [batch]);
        });
    });
    expect(order).toEqual(['answered ok', 'run ended']);
  });
});
