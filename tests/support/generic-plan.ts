import { withTransaction, type Database } from '#infra/db/database.ts';

/**
 * The plan Postgres keeps for a named statement once it goes generic (from its sixth run on, per
 * connection), as text: `args` is the EXECUTE argument list, literals in SQL syntax. A hot statement
 * must stay on its index under that plan, whatever the table's statistics say at the time.
 */
export async function genericPlan(db: Database, sql: string, args: string): Promise<string> {
  return withTransaction(db.pool, async (client) => {
    await client.query('SET LOCAL plan_cache_mode = force_generic_plan');
    await client.query(`PREPARE generic_plan_probe AS ${sql}`);
    try {
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN EXECUTE generic_plan_probe(${args})`,
      );
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    } finally {
      await client.query('DEALLOCATE generic_plan_probe');
    }
  });
}
