import type { EventMetadata, NewEvent, Recorded } from '#events/envelope.ts';
import type { Decider, Decision } from '#services/decider.ts';

export const testMetadata = (overrides: Partial<EventMetadata> = {}): EventMetadata => ({
  actor: { id: 'user-1', name: 'Ada' },
  commandId: 'cmd-1',
  correlationId: 'cmd-1',
  at: '2026-11-01T10:00:00.000Z',
  ...overrides,
});

/** Turns decided events into recorded ones, as the store would return them for `evolve`. */
export function recorded<E extends NewEvent>(
  events: E[],
  metadata: EventMetadata = testMetadata(),
): Recorded<E>[] {
  return events.map(
    (event, i) =>
      ({
        ...event,
        position: i + 1,
        transactionId: String(100 + i),
        stream: 'test',
        streamVersion: i + 1,
        schemaVersion: 1,
        metadata,
        recordedAt: new Date(metadata.at),
      }) as unknown as Recorded<E>,
  );
}

/** given(events).when(command) → the decision, folding the history through `evolve` first. */
export function given<C, E extends NewEvent, S>(decider: Decider<C, E, S>, history: Recorded<E>[] | E[]) {
  const events = (
    history.length > 0 && 'streamVersion' in history[0]! ? history : recorded(history as E[])
  ) as Recorded<E>[];
  const state = events.reduce((s, e) => decider.evolve(s, e), decider.initialState());
  return {
    state,
    when: (command: C): Decision<E> => decider.decide(command, state),
  };
}

/** The fields of a competitor as the unit tests add it (segment `smb`). */
export const exampleCompetitorFields = {
  name: 'Acme',
  website: 'https://acme.example',
  segmentId: 'smb',
  threat: 'medium' as const,
  headquarters: null,
};
