import { eventRegistry } from '#events/all-events.ts';
import { createEventStore } from '#events/store/event-store.ts';
import type { Database } from '#infra/db/database.ts';
import { allProjections } from '#projections/all-projections.ts';
import { ProjectionRunner } from '#projections/runner.ts';
import { bootstrapContent } from '#services/bootstrap/bootstrap.ts';
import { createCommandRouter } from '#services/command-router.ts';
import { addCompetitorCommand, envelope } from '#tests/support/runtime-pieces.ts';
import { silentLog } from './services.ts';

const threats = ['low', 'medium', 'high'] as const;
const segments = ['smb', 'mid-market', 'enterprise'];

const note = (i: number, topic: string) =>
  `${topic} of rival ${i}: strong brand, quick onboarding, ` +
  'usage-based pricing with annual discounts. '.repeat(3);

/**
 * Default segments plus `count` competitors, each with a website, headquarters and two notes, all
 * through the real command handler; then every projection caught up. Returns the competitor ids.
 */
export async function seedCompetitors(db: Database, count: number): Promise<string[]> {
  const store = createEventStore(db.pool, eventRegistry);
  const route = createCommandRouter(store);
  await bootstrapContent(store, route, { demoData: false });
  const ids: string[] = [];
  for (let i = 1; i <= count; i++) {
    const add = addCompetitorCommand(`Bench Rival ${String(i).padStart(3, '0')}`, {
      website: `https://rival-${i}.example.com`,
      headquarters: 'Berlin, Germany',
      threat: threats[i % threats.length],
      segmentId: segments[i % segments.length],
    });
    const competitorId = add.payload.competitorId;
    const commands = [
      add,
      {
        type: 'UpdateCompetitorNote',
        payload: { competitorId, column: 'strengths', value: note(i, 'Strengths') },
      },
      {
        type: 'UpdateCompetitorNote',
        payload: { competitorId, column: 'pricing', value: note(i, 'Pricing') },
      },
    ] as const;
    for (const command of commands) {
      const outcome = await route(envelope(command));
      if (outcome.status !== 'accepted') throw new Error(`seeding ${command.type}: ${outcome.message}`);
    }
    ids.push(competitorId);
  }
  const runner = new ProjectionRunner({ db, store, projections: allProjections, log: silentLog });
  for (const projection of allProjections) await runner.catchUp(projection);
  return ids;
}
