import { Writable } from 'node:stream';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPostgresDatabase } from '#infra/db/open-postgres.ts';
import { createLogger } from '#infra/logger.ts';
import { backendUrl, runs } from '#tests/support/environment.ts';
import { until } from '#tests/support/until.ts';

/**
 * An idle pooled connection cut by the server (a restart, an operator's pg_terminate_backend) is one short
 * warning: its message and code. It was the driver's error with its client attached (host, user,
 * database, the statements prepared on it) and a stack trace: several kilobytes on an operator command's
 * standard error, where one line is the rule. Postgres only: the embedded database has no connections to cut.
 */
describe.skipIf(!runs('postgres'))('an idle database connection cut by the server', () => {
  it('is one short warning with the message and code, not the driver client and a stack trace', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    const db = await openPostgresDatabase(backendUrl('postgres'), createLogger('warn', sink), {
      poolSize: 1,
    });
    const admin = new pg.Client({ connectionString: backendUrl('postgres') });
    await admin.connect();
    try {
      const { rows } = await db.pool.query<{ pid: number }>(
        "SELECT pg_backend_pid() AS pid, 'a statement the warning must not carry' AS text",
      );
      await admin.query('SELECT pg_terminate_backend($1)', [rows[0]?.pid]);
      await until(async () => lines.length > 0, 'the warning', 10_000);
      expect(lines).toHaveLength(1);
      const warning = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
      expect(warning).toMatchObject({ level: 40, msg: 'idle database connection failed' });
      expect(typeof warning.error).toBe('string');
      expect(lines[0]).not.toContain('a statement the warning must not carry');
      expect(lines[0]).not.toMatch(/\bat \S+ \(|"stack"|"client"/);
      expect(lines[0]!.length).toBeLessThan(400);
      // The pool reconnects for the next query.
      expect((await db.pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one).toBe(1);
    } finally {
      await admin.end();
      await db.close();
    }
  });
});
