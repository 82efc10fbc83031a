/**
 * Run as its own process by tests/integration/embedded-close.test.ts: a statement fails on the embedded
 * database, the database is closed at once, and the process must carry on and exit by itself.
 */
import { eventRegistry } from '#events/all-events.ts';
import { exportEvents } from '#events/store/export-log.ts';
import { migrate } from '#infra/db/migrate.ts';
import { openEmbeddedDatabase } from '#infra/db/open-embedded.ts';

const db = await openEmbeddedDatabase(process.argv[2] ?? 'memory://');
await migrate(db.pool);
try {
  for await (const event of exportEvents(db.pool, eventRegistry, { from: { position: 1e23 } }))
    console.log('unexpected event', event.position);
} catch (error) {
  console.log(`failed: ${(error as Error).message}`);
}
await db.close();
console.log('closed');
setTimeout(() => console.log('still running'), 200);
