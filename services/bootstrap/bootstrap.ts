import { createHash } from 'node:crypto';
import type { Command } from '#events/command.ts';
import { noteColumns } from '#events/competitor/fields.ts';
import { systemActor } from '#events/envelope.ts';
import { defaultSegments } from '#events/segment/commands.ts';
import type { EventLogReader } from '#events/store/event-log-reader.ts';
import type { CommandRouter } from '../command-router.ts';
import { demoCompetitors } from './demo-competitors.ts';

/** A stable uuid from a name, so every instance bootstrapping at once issues the very same commands. */
export function stableUuid(name: string): string {
  const h = createHash('sha256').update(`rivals:${name}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * First-start content: the default segments and, on a fresh install, the demo competitors. Command ids
 * are fixed, so running this again, or on several instances at once, appends nothing new, and a run cut
 * short (a killed first start) is finished by the next.
 */
export async function bootstrapContent(
  store: EventLogReader,
  route: CommandRouter,
  options: { demoData: boolean; clock?: () => Date },
): Promise<void> {
  // Fresh: nothing but this content so far. A first start killed half-way is completed by the next start;
  // an install anyone has used (an admin, a competitor) never gets demo rows.
  const freshInstall = !(await store.hasEventsBesides(['bootstrap:segment:', 'bootstrap:demo:']));
  const at = (options.clock ?? (() => new Date()))().toISOString();
  const run = async (commandId: string, command: Command) => {
    const outcome = await route({ commandId, correlationId: 'bootstrap', actor: systemActor, at, command });
    if (outcome.status === 'rejected') throw new Error(`bootstrap ${commandId}: ${outcome.message}`);
  };
  for (const segment of defaultSegments) {
    await run(`bootstrap:segment:${segment.segmentId}`, { type: 'AddSegment', payload: { ...segment } });
  }
  if (!freshInstall || !options.demoData) return;
  for (const demo of demoCompetitors) {
    const competitorId = stableUuid(`demo:${demo.name}`);
    const { notes, ...fields } = demo;
    await run(`bootstrap:demo:${competitorId}`, {
      type: 'AddCompetitor',
      payload: { ...fields, competitorId },
    });
    for (const column of noteColumns) {
      if (!notes[column]) continue;
      await run(`bootstrap:demo:${competitorId}:${column}`, {
        type: 'UpdateCompetitorNote',
        payload: { competitorId, column, value: notes[column] },
      });
    }
  }
}
