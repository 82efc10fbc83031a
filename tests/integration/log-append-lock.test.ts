import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgErrorCode, type Client } from '#infra/db/database.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';

/**
 * A write of the log by a transaction that may no longer write it (decision 0028) is refused, with a
 * message that names both ways to get there and a hint that says what to do; a transaction that takes
 * the append lock at its start may retry inside a savepoint.
 */
describe.each(databaseBackends)('the log append lock on %s', (backend) => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase(backend);
    await db.pool.query('CREATE TABLE append_lock_scratch (id serial PRIMARY KEY)');
  });
  afterAll(async () => db.drop());

  const insertEvent = (client: Client) => {
    const id = randomUUID();
    return client.query(
      `INSERT INTO events (stream, stream_version, type, schema_version, data, metadata, command_id)
       VALUES ($1, 1, 'CompetitorDeleted', 1, $2::jsonb, $3::jsonb, $4)`,
      [
        `lock-${id}`,
        JSON.stringify({ competitorId: id, name: 'n' }),
        JSON.stringify({
          actor: { id: 'a', name: 'A' },
          commandId: id,
          correlationId: id,
          at: new Date().toISOString(),
        }),
        id,
      ],
    );
  };

  async function inTransaction<T>(work: (client: Client) => Promise<T>): Promise<T> {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      return await work(client);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  }

  const refusal = (client: Client) =>
    insertEvent(client).then(
      () => undefined,
      (error: unknown) => ({
        code: pgErrorCode(error),
        message: (error as Error).message,
        hint: (error as { hint?: string }).hint,
      }),
    );

  it('a transaction that wrote elsewhere first is refused, told why and what to do', async () => {
    const refused = await inTransaction(async (client) => {
      await client.query('INSERT INTO append_lock_scratch DEFAULT VALUES');
      return refusal(client);
    });
    expect(refused?.code).toBe('55000');
    expect(refused?.message).toMatch(/can no longer write to the event log: .*wrote elsewhere first/);
    expect(refused?.hint).toMatch(/new transaction, or call log_append_lock\(\) at its start/);
  });

  it('a retry inside the transaction after rolling back to a savepoint is refused, and the message names the savepoint', async () => {
    const refused = await inTransaction(async (client) => {
      await client.query('SAVEPOINT attempt');
      await insertEvent(client);
      await client.query('ROLLBACK TO SAVEPOINT attempt');
      return refusal(client);
    });
    expect(refused?.code).toBe('55000');
    expect(refused?.message).toMatch(/rolled back to a savepoint taken before its first write of the log/);
  });

  it('a transaction that takes the append lock at its start may retry inside a savepoint', async () => {
    const written = await inTransaction(async (client) => {
      await client.query('SELECT log_append_lock()');
      await client.query('SAVEPOINT attempt');
      await insertEvent(client);
      await client.query('ROLLBACK TO SAVEPOINT attempt');
      await insertEvent(client);
      const { rows } = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM events WHERE stream LIKE 'lock-%'",
      );
      return rows[0]?.n;
    });
    expect(written).toBe(1);
  });
});
