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

/**
 * The id an operator's action on a dead letter is recorded under. With the form's key (a fresh one per
 * rendered form, web/idempotency.server.ts), the same request sent again (the browser retrying after a lost
 * answer, a double click) gets the same id, so it is found to be the first one's resend rather than a
 * second action. Derived from who sent it, the letter and the action as well as the key, so the key binds
 * that one request: the same key sent by another user or for another letter or action is another
 * action, and never the id of a command sent with that key (`command_outcomes` holds both).
 */
export const letterActionId = (
  key: string,
  actorId: string,
  letterId: string,
  action: LetterAction,
): string => {
  const hex = createHash('sha256')
    .update(`dead-letter-action\n${key}\n${actorId}\n${letterId}\n${action}`)
    .digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
};

/**
 * `mine`: this request's action is the recorded one: it recorded it now, or it is the resend of the
 * request that did (`letterActionId`). Otherwise another request recorded `action` first, `by` whom.
 */
export type LetterClaim = { action: LetterAction; mine: boolean; by: Actor } | { refused: string };

/**
 * Records an operator's Retry or Discard of a dead letter before the bus is touched: the event is the
 * claim (the letter's own stream, expected empty), so the first of two clicks wins and the audit never
 * misses an action that was done. Says which action the letter is claimed for, by whom, and whether it is
 * this request's (recorded now, or by its first sending: `commandId`, see `letterActionId`); the caller
 * then carries that action out on the stored letter (again, harmlessly, when it was done).
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
  commandId: string = randomUUID(),
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
  const at = new Date().toISOString();
  const result = await store.append(stream, [event], 0, commandId, {
    actor,
    commandId,
    correlationId: commandId,
    at,
  });
  if (result.kind === 'appended') return { action: wanted, mine: true, by: actor };
  // Recorded before: by this request's first sending (a duplicate of its id), or by another request.
  const { events } = await store.readStream(stream);
  const first = events[0];
  const claimed = actionOf(first?.type ?? '');
  if (!first || !claimed) throw new Error(`dead letter ${letter.id}: its stream ${stream} holds no action`);
  return { action: claimed, mine: first.metadata.commandId === commandId, by: first.metadata.actor };
}

/** An action recorded for a dead letter, as `recordedLetterAction` finds it. */
export interface RecordedLetterAction {
  action: LetterAction;
  by: Actor;
  /** The id it was recorded under (`letterActionId` for a request that carried a key). */
  commandId: string;
  /** The dead-lettered command's type; null for an entry that was no command. */
  commandType: string | null;
}

/**
 * The action recorded for a dead letter no longer listed: what became of it and who did it. Its row is gone,
 * so its action's stream is named by the letter's key (`deadLetterKey`), which the /ops form carries; the
 * stream's first event must be about this letter id (a key from another letter's form finds nothing).
 * Undefined when none was recorded. One read of one stream, by its key: no index over the log needed.
 */
export async function recordedLetterAction(
  store: EventStore,
  letterId: string,
  letterKey: string,
): Promise<RecordedLetterAction | undefined> {
  const { events } = await store.readStream(deadLetterStream(letterKey));
  const first = events[0];
  const action = actionOf(first?.type ?? '');
  const data = (first?.data ?? {}) as { deadLetterId?: unknown; commandType?: unknown };
  if (!first || !action || String(data.deadLetterId) !== letterId) return undefined;
  return {
    action,
    by: first.metadata.actor,
    commandId: first.metadata.commandId,
    commandType: typeof data.commandType === 'string' ? data.commandType : null,
  };
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
