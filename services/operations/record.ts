import { randomUUID } from 'node:crypto';
import { systemActor, type Actor, type NewEvent } from '#events/envelope.ts';
import type { EventStore } from '#events/store/event-store.ts';
import { operationsStream } from '#events/streams.ts';

/** Appends an operator action to the operations stream (retrying if another operator wrote first). */
export async function recordOperation(
  store: EventStore,
  event: NewEvent,
  actor: Actor = systemActor,
): Promise<void> {
  const commandId = randomUUID();
  for (let attempt = 0; attempt < 10; attempt++) {
    const { version } = await store.readStream(operationsStream());
    const result = await store.append(operationsStream(), [event], version, commandId, {
      actor,
      commandId,
      correlationId: commandId,
      at: new Date().toISOString(),
    });
    if (result.kind !== 'conflict') return;
  }
  throw new Error('could not record the operation: the operations stream is busy');
}
