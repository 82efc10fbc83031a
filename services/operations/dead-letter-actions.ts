import { createHash, randomUUID } from 'node:crypto';
import type { DeadLetter } from '#events/store/dead-letters.ts';
import type { Actor } from '#events/envelope.ts';
import type { EventStore } from '#events/store/event-store.ts';
import { deadLetterStream, usersStream } from '#events/streams.ts';
import type { Queryable } from '#infra/db/database.ts';
import { loadState } from '../decide-and-append.ts';
import { actorMayDecide, usersDecider } from '../user/users.ts';

export type LetterAction = 'retry' | 'discard';

const eventTypes = { retry: 'DeadLetterRetried', discard: 'DeadLetterDiscarded' } as const;
const actionOf = (type: string): LetterAction | undefined =>
  type === eventTypes.retry ? 'retry' : type === eventTypes.discard ? 'discard' : undefined;

/**
 * Which dead letter this is, for good: a bus entry id alone can come back (the in-process bus numbers
 * its entries from 1 again after a restart), so its command id (or its raw text) is part of the key.
 */
export const deadLetterKey = (letter: DeadLetter): string =>
  createHash('sha256')
    .update(`${letter.id}\n${letter.envelope?.commandId ?? letter.raw ?? ''}`)
    .digest('hex')
    .slice(0, 32);

export type LetterClaim = { action: LetterAction; mine: boolean } | { refused: string };

/**
 * Records an operator's Retry or Discard of a dead letter before the bus is touched: the event is the
 * claim (the letter's own stream, expected empty), so the first of two clicks wins and the audit never
 * misses an action that was done. Says which action the letter is claimed for, and whether this call
 * claimed it; the caller then carries that action out on the bus (again, harmlessly, when it was done).
 *
 * The operator's account is checked as it is now, as the command router does for commands: the route
 * checked the role when the request came in, and a disable or a demotion answered while the request was
 * on its way must stop it (`refused`, the router's words; nothing recorded or done).
 */
export async function claimLetterAction(
  store: EventStore,
  letter: DeadLetter,
  wanted: LetterAction,
  actor: Actor,
): Promise<LetterClaim> {
  const { state: users } = await loadState(store, usersStream(), usersDecider);
  const refused = actorMayDecide(users, actor.id, 'ops.manage');
  if (refused) return { refused: refused.message };
  const stream = deadLetterStream(deadLetterKey(letter));
  const base = {
    deadLetterId: letter.id,
    commandId: letter.envelope?.commandId ?? null,
    commandType: letter.envelope?.command.type ?? null,
  };
  const event =
    wanted === 'retry'
      ? { type: eventTypes.retry, data: base }
      : { type: eventTypes.discard, data: { ...base, error: letter.error } };
  const commandId = randomUUID();
  const at = new Date().toISOString();
  const result = await store.append(stream, [event], 0, commandId, {
    actor,
    commandId,
    correlationId: commandId,
    at,
  });
  if (result.kind === 'appended') return { action: wanted, mine: true };
  const { events } = await store.readStream(stream);
  const claimed = actionOf(events[0]?.type ?? '');
  if (!claimed) throw new Error(`dead letter ${letter.id}: its stream ${stream} holds no action`);
  return { action: claimed, mine: false };
}

/**
 * The actions recorded for these dead letters that the bus has not carried out yet (they are still
 * listed): /ops says so, and either button finishes the recorded action.
 */
export async function recordedLetterActions(
  db: Queryable,
  letters: readonly DeadLetter[],
): Promise<Map<string, LetterAction>> {
  if (letters.length === 0) return new Map();
  const byStream = new Map(letters.map((l) => [deadLetterStream(deadLetterKey(l)), l.id]));
  const { rows } = await db.query<{ stream: string; type: string }>(
    'SELECT stream, type FROM events WHERE stream = ANY($1::text[]) AND stream_version = 1',
    [[...byStream.keys()]],
  );
  const recorded = new Map<string, LetterAction>();
  for (const row of rows) {
    const id = byStream.get(row.stream);
    const action = actionOf(row.type);
    if (id !== undefined && action) recorded.set(id, action);
  }
  return recorded;
}
