import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '#infra/config.ts';
import { createLogger } from '#infra/logger.ts';
import { allProjections } from '#projections/all-projections.ts';
import type { ProjectionRunner } from '#projections/runner.ts';
import { seedCompetitors } from '#services/seed/seed-competitors.ts';
import { writeSide } from '#tests/support/runtime-pieces.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';
import type { EventStore } from '#events/store/event-store.ts';
import { readinessChecks, readinessLogger } from '#web/readiness-checks.server.ts';

/**
 * Probes ask /readyz every few seconds, and the log says a problem when it starts or changes, not at
 * every probe. A projection behind was said again at every probe: its detail carried how far behind,
 * which changes as events arrive. The figures are still logged, with the first line.
 */
describe('the readiness log while a projection is behind', () => {
  let db: TestDatabase;
  let store: EventStore;
  let runner: ProjectionRunner;

  beforeAll(async () => {
    db = await createTestDatabase('embedded');
    ({ store, runner } = await writeSide(db));
  });
  afterAll(async () => db?.drop());

  it('says it once, with its figures, though they change at every probe', async () => {
    const projection = allProjections.find((p) => p.name === 'competitor-list');
    if (!projection) throw new Error('no competitor-list projection');
    await runner.catchUp(projection);
    const lines: { msg: string; dependency?: string; figures?: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const log = createLogger('info', sink);
    const deps = {
      db,
      log,
      redis: undefined,
      readiness: undefined,
      config: { ...loadConfig({}), READY_MAX_LAG_EVENTS: 1 },
    };
    const logChanges = readinessLogger(log);

    // Nothing projects them (the runner is not started): behind by 2 events, then by 4.
    await seedCompetitors(db.pool, store, { count: 1, seed: 1, batchSize: 1 });
    logChanges(await readinessChecks(deps));
    await seedCompetitors(db.pool, store, { count: 1, seed: 2, batchSize: 1 });
    logChanges(await readinessChecks(deps));
    await new Promise((resolve) => setImmediate(resolve));

    const said = lines.filter((l) => l.dependency === 'projections');
    expect(said.map((l) => l.msg)).toEqual(['readiness: dependency not ok']);
    expect(said[0]?.figures).toMatch(/competitor-list by \d+ events/);
  });
});
