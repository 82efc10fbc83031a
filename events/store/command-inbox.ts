import type { Queryable } from '#infra/db/database.ts';
import type { CommandEnvelope, Outcome } from '../command.ts';

export type Admission =
  /** Stored now: the command will be handled whatever restarts next. */
  | { kind: 'admitted' }
  /** The same key arrived before and is still in flight: a retry; wait for the first one's outcome. */
  | { kind: 'in-flight' }
  /** The same key was handled before: its first outcome. */
  | { kind: 'handled'; outcome: Outcome }
  /** The key belongs to another user's command. */
  | { kind: 'foreign' }
  /** The key came back with a different request than the one it was first sent with. */
  | { kind: 'different' };

/** What a key sent before comes to: anything but a new admission. */
export type EarlierAdmission = Exclude<Admission, { kind: 'admitted' }>;

/**
 * The answer for a command the workers gave up on (see the dead letters on /ops): to its sender when they
 * give up, and to every later sending of the same key. That key can never succeed on its own (only an
 * operator's Retry can), so `setAside` tells a client to send its next attempt under a new key: the note
 * dialog does, and a form re-rendered after the refusal carries a new key anyway.
 */
export const givenUp: Outcome = {
  status: 'rejected',
  code: 'failed',
  message:
    'This change could not be saved: the server failed on it several times and set it aside for an administrator to look into. Nothing was changed. You can try again.',
  details: { setAside: true },
};

interface EarlierRow {
  outcome: Outcome | null;
  owner: string | null;
  given_up: boolean | null;
  digest: string | null;
}

/** A key that was admitted before, as this actor and request find it. */
function earlierAdmission(
  row: EarlierRow | undefined,
  actorId: string,
  requestDigest: string | undefined,
): EarlierAdmission {
  if (row?.owner && row.owner !== actorId) return { kind: 'foreign' };
  if (requestDigest && row?.digest && row.digest !== requestDigest) return { kind: 'different' };
  if (row?.outcome) return { kind: 'handled', outcome: row.outcome };
  // Settled without an outcome: the workers gave up on it (it is in the dead letters).
  if (row?.given_up) return { kind: 'handled', outcome: givenUp };
  // Admitted before (by this user, for this request) and not handled yet: its handler records the outcome.
  return { kind: 'in-flight' };
}

/**
 * The durable half of "accepted": commands are written here (Postgres) before anyone is told they were
 * accepted, and stay until a worker has handled them. Redis only carries the wake-up; a worker re-sends
 * whatever stays here too long, so a bus that lost its entries (a restart without persistence) loses
 * nothing. Idempotency keys meet here too: a retried key is recognised, never admitted twice.
 */
export class CommandInbox {
  constructor(private readonly db: Queryable) {}

  /**
   * @param requestDigest what the request said (`requestDigest` in web/idempotency.server.ts): a key sent
   *   again with a different request is `different`, not a retry. Omitted for commands without a request.
   */
  async admit(envelope: CommandEnvelope, requestDigest?: string): Promise<Admission> {
    // One statement: the outcome of an earlier handling, or the row of an earlier admission, or a new row.
    const { rows } = await this.db.query<{
      outcome: Outcome | null;
      admitted: boolean;
      owner: string | null;
      given_up: boolean | null;
      digest: string | null;
    }>({
      // Named, like every statement on the per-command path: parsed and planned once per connection.
      name: 'rivals-inbox-admit',
      text: `WITH done AS (
         SELECT outcome FROM command_outcomes WHERE command_id = $1
       ), earlier AS (
         SELECT actor_id, settled_at, request_digest FROM command_inbox WHERE command_id = $1
       ), ins AS (
         INSERT INTO command_inbox (command_id, actor_id, envelope, request_digest)
         SELECT $1, $2, $3::jsonb, $4 WHERE NOT EXISTS (SELECT 1 FROM done)
         ON CONFLICT (command_id) DO NOTHING
         RETURNING 1
       )
       SELECT (SELECT outcome FROM done) AS outcome, EXISTS (SELECT 1 FROM ins) AS admitted,
              (SELECT actor_id FROM earlier) AS owner,
              (SELECT settled_at IS NOT NULL FROM earlier) AS given_up,
              (SELECT request_digest FROM earlier) AS digest`,
      values: [envelope.commandId, envelope.actor.id, JSON.stringify(envelope), requestDigest ?? null],
    });
    if (rows[0]?.admitted) return { kind: 'admitted' };
    // Not admitted and no earlier row seen: a concurrent request admitted the key after this statement's
    // snapshot (the insert waited for it, then did nothing). Its row is committed now: read it, so another
    // user's key or a different request is refused here too, not answered with that request's outcome.
    const row = rows[0]?.owner ? rows[0] : ((await this.earlier(envelope.commandId)) ?? rows[0]);
    return earlierAdmission(row, envelope.actor.id, requestDigest);
  }

  /**
   * What became of a key sent before, without admitting anything: undefined when it was never admitted.
   * For a request that finds nothing left to do (a move button whose item already moved to the end): if
   * it is the retry of one that did it, it is answered as that one was.
   */
  async recall(
    commandId: string,
    actorId: string,
    requestDigest?: string,
  ): Promise<EarlierAdmission | undefined> {
    const row = await this.earlier(commandId);
    return row && earlierAdmission(row, actorId, requestDigest);
  }

  /** The key's row as committed now, with its outcome if it has one. */
  private async earlier(commandId: string): Promise<EarlierRow | undefined> {
    const { rows } = await this.db.query<EarlierRow>(
      `SELECT (SELECT outcome FROM command_outcomes WHERE command_id = $1) AS outcome, actor_id AS owner,
              settled_at IS NOT NULL AS given_up, request_digest AS digest
       FROM command_inbox WHERE command_id = $1`,
      [commandId],
    );
    return rows[0];
  }

  /** Marks commands handled (or given up on): called by workers after each batch. */
  async settle(commandIds: readonly string[]): Promise<void> {
    if (commandIds.length === 0) return;
    await this.db.query({
      name: 'rivals-inbox-settle',
      text: 'UPDATE command_inbox SET settled_at = now() WHERE command_id = ANY($1::text[]) AND settled_at IS NULL',
      values: [commandIds],
    });
  }

  /**
   * A command whose delivery failed, which the bus delivers again after `ms` (its claim idle time): the
   * sweeper leaves it alone until `ms` after that. Re-sent meanwhile, it would be on the bus twice, and
   * each copy of a command that keeps failing would end in the dead letters. If the bus loses it, the
   * sweeper re-sends it once the hold is over.
   */
  async hold(commandId: string, ms: number): Promise<void> {
    await this.db.query(
      `UPDATE command_inbox SET resent_at = now() + make_interval(secs => $2::double precision / 1000)
       WHERE command_id = $1 AND settled_at IS NULL`,
      [commandId, ms],
    );
  }

  /**
   * Commands admitted (or last re-sent) more than `olderThanMs` ago and still here: the bus may have lost
   * them. Marks them re-sent, so concurrent workers never take the same ones in the same round.
   */
  async takeStale(olderThanMs: number, limit: number): Promise<CommandEnvelope[]> {
    const { rows } = await this.db.query<{ envelope: CommandEnvelope }>(
      `UPDATE command_inbox SET resent_at = now(), resends = resends + 1
       WHERE command_id IN (
         SELECT command_id FROM command_inbox
         WHERE settled_at IS NULL AND coalesce(resent_at, accepted_at) < now() - make_interval(secs => $1::double precision / 1000)
         ORDER BY accepted_at
         LIMIT $2
         FOR UPDATE SKIP LOCKED)
       RETURNING envelope`,
      [olderThanMs, limit],
    );
    return rows.map((r) => r.envelope);
  }

  /** How many accepted commands are not handled yet, and how old the oldest is (for /ops and /readyz). */
  async backlog(): Promise<{ count: number; oldestSeconds: number }> {
    const { rows } = await this.db.query<{ count: number; oldest: number | null }>(
      `SELECT count(*)::int AS count, extract(epoch FROM now() - min(accepted_at))::float8 AS oldest
       FROM command_inbox WHERE settled_at IS NULL`,
    );
    return { count: rows[0]?.count ?? 0, oldestSeconds: rows[0]?.oldest ?? 0 };
  }
}
