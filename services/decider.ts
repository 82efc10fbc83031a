import type { Outcome } from '#events/command.ts';
import type { NewEvent, Recorded } from '#events/envelope.ts';

export type Rejection = Extract<Outcome, { status: 'rejected' }>;

/** What `decide` answers: the events to append (possibly none), or a rejection. */
export type Decision<E extends NewEvent = NewEvent> = { events: E[] } | Rejection;

/**
 * An aggregate's three pure pieces. `evolve` sees recorded events (with metadata, so state can say who
 * changed what); `decide` gets time, ids and the actor only through the command.
 */
export interface Decider<C, E extends NewEvent, S> {
  initialState(): S;
  evolve(state: S, event: Recorded<E>): S;
  decide(command: C, state: S): Decision<E>;
}

export const accept = <E extends NewEvent>(...events: E[]): Decision<E> => ({ events });

export const reject = (
  code: Rejection['code'],
  message: string,
  extra: Pick<Rejection, 'fields' | 'details'> = {},
): Rejection => ({ status: 'rejected', code, message, ...extra });

export const isRejection = (value: Decision | Outcome): value is Rejection =>
  'status' in value && value.status === 'rejected';
