import type { Queryable } from './database.ts';

/**
 * Every Postgres LISTEN/NOTIFY channel the app uses, named once. Notifications are sent after the
 * commit they announce, in their own statement: a NOTIFY inside a transaction makes every commit wait
 * for Postgres's notification lock (see migration 005).
 */
export const notifyChannels = {
  /** Writers announce new events (empty payload); projection runners listen. */
  eventsAppended: 'rivals_events',
  /** A projection committed a batch (payload: its name); read-your-writes watchers listen. */
  projected: 'rivals_projected',
} as const;

export type NotifyChannel = (typeof notifyChannels)[keyof typeof notifyChannels];

/** Sends one notification on `channel`. */
export async function notify(db: Queryable, channel: NotifyChannel, payload = ''): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', [channel, payload]);
}
