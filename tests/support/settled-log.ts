import type { Queryable } from '#infra/db/database.ts';

/**
 * Waits until every event written so far is settled: commit-safe reads stop at the oldest transaction
 * still running that may write events (`log_horizon`), and on a shared test server that may be another
 * test file's. A test that counts what a fresh reader reads waits here first, so the count
 * does not depend on what else the server is doing.
 */
export async function waitUntilLogSettled(db: Queryable, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.query<{ settled: boolean }>(
      `SELECT coalesce(max(transaction_id) < log_horizon(), true) AS settled FROM events`,
    );
    if (rows[0]?.settled) return;
    if (Date.now() > deadline) throw new Error(`the event log did not settle within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
