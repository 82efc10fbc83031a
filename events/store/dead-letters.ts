import { createHash } from 'node:crypto';
import type { BusEnvelope } from '#events/command-shape.ts';
import { pgErrorCode, type Queryable } from '#infra/db/database.ts';

/** A command the workers gave up on (or a bus entry that was not a command at all), as /ops lists it. */
export interface DeadLetter {
  /** Its row id: what /ops links to. Never reused, unlike a bus entry id. */
  id: string;
  /** Null when the entry was not a valid envelope at all; `raw` then holds what was on the bus. */
  envelope: BusEnvelope | null;
  raw?: string;
  error: string;
  deliveryCount: number;
}

/** What a bus hands over when it gives up on an entry. */
export interface NewDeadLetter {
  busEntryId: string;
  envelope: BusEnvelope | null;
  raw?: string;
  error: string;
  deliveryCount: number;
  /**
   * The command given up on, when known (the envelope's, or that of a command that failed its full parse):
   * settled in the inbox by the same statement, so the sweeper stops re-sending it and a Retry made right
   * after cannot be undone by a settle that comes later.
   */
  commandId?: string;
}

/** Retry of a dead letter that holds no command that can be sent again. */
export class NotRetryableError extends Error {
  override name = 'NotRetryableError';
}

/** Where a bus puts what it gives up on; the bus acknowledges the entry only once this resolved. */
export interface DeadLetterSink {
  add(letter: NewDeadLetter): Promise<void>;
}

/** Raw text kept for a letter that is not a command: enough to see what it was, bounded. */
const RAW_KEPT = 65_536;

/** Text Postgres can hold (no NUL), bounded: an error, or a bus entry id (broken in an old Redis letter). */
// eslint-disable-next-line no-control-regex -- NUL is what Postgres text cannot hold
const storable = (text: string, max: number) => text.replace(/\u0000/g, '\ufffd').slice(0, max);

/**
 * Whether Postgres's jsonb can hold this JSON text: it refuses the escape of NUL and of half a character
 * (a lone surrogate), which JSON.stringify writes as `\\u0000` and `\\udXXX` (a backslash before them is
 * escaped itself, hence the even number of backslashes).
 */
const jsonbCanHold = (json: string) => !/(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/i.test(json);

/** One letter per failing command; an entry that is no command is one letter per bus entry and text. */
const letterKey = (letter: NewDeadLetter, raw: string | undefined) =>
  letter.envelope
    ? `command:${letter.envelope.commandId}`
    : `entry:${letter.busEntryId}:${createHash('sha256')
        .update(raw ?? '')
        .digest('hex')
        .slice(0, 32)}`;

interface Row {
  id: string;
  envelope: string | null;
  raw: string | null;
  error: string;
  delivery_count: number;
}

const toLetter = (row: Row): DeadLetter => ({
  id: row.id,
  envelope: row.envelope === null ? null : (JSON.parse(row.envelope) as BusEnvelope),
  ...(row.raw !== null ? { raw: JSON.parse(row.raw) as string } : {}),
  error: row.error,
  deliveryCount: row.delivery_count,
});

const COLUMNS = 'id::text AS id, envelope, raw, error, delivery_count';

/** Postgres could not turn the letter's JSON into the inbox's jsonb (a NUL or a broken character in it). */
const unstorable = (error: unknown) => ['22P05', '22P02', '22021'].includes(pgErrorCode(error) ?? '');

/**
 * The dead letters, in the database: what the workers gave up on stays until an operator retries or
 * discards it on /ops, whatever restarts meanwhile (Redis runs without persistence). The bus adds to it
 * before it acknowledges the entry; a letter added twice (a crash between the two) is one letter.
 */
export class DeadLetterStore implements DeadLetterSink {
  constructor(private readonly db: Queryable) {}

  /**
   * Adds (or, for the same command, updates) a letter. A command the inbox could not store again (a NUL
   * in its JSON: it never came through the inbox) is kept as raw text, which can only be discarded.
   */
  async add(given: NewDeadLetter): Promise<void> {
    const json = given.envelope && JSON.stringify(given.envelope);
    const busEntryId = storable(given.busEntryId, 200);
    const letter =
      json && !jsonbCanHold(json)
        ? { ...given, busEntryId, envelope: null, raw: json }
        : { ...given, busEntryId };
    const raw = letter.envelope ? undefined : (letter.raw ?? '').slice(0, RAW_KEPT);
    await this.db.query(
      `WITH letter AS (
         INSERT INTO dead_letters (letter_key, bus_entry_id, envelope, raw, error, delivery_count)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (letter_key) DO UPDATE
           SET bus_entry_id = excluded.bus_entry_id, error = excluded.error,
               delivery_count = excluded.delivery_count, dead_at = now()
         RETURNING id
       )
       UPDATE command_inbox SET settled_at = now()
       WHERE command_id = $7 AND settled_at IS NULL AND EXISTS (SELECT 1 FROM letter)`,
      [
        letterKey(letter, raw),
        letter.busEntryId,
        letter.envelope ? json : null,
        raw === undefined ? null : JSON.stringify(raw),
        storable(letter.error, 2_000),
        letter.deliveryCount,
        given.commandId ?? given.envelope?.commandId ?? null,
      ],
    );
  }

  /** The newest `limit` letters, oldest first. */
  async list(limit = 100): Promise<DeadLetter[]> {
    const { rows } = await this.db.query<Row>(
      `SELECT * FROM (SELECT ${COLUMNS} FROM dead_letters ORDER BY id DESC LIMIT $1) newest ORDER BY id::bigint`,
      [Math.max(0, limit)],
    );
    return rows.map(toLetter);
  }

  async count(): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>('SELECT count(*)::int AS n FROM dead_letters');
    return rows[0]?.n ?? 0;
  }

  /** The letter with this id, if it is still there. `id` is a row id (digits), checked at the edge. */
  async find(id: string): Promise<DeadLetter | undefined> {
    const { rows } = await this.db.query<Row>(`SELECT ${COLUMNS} FROM dead_letters WHERE id = $1`, [id]);
    return rows[0] && toLetter(rows[0]);
  }

  /**
   * Takes the letter out and puts its command back in the inbox as accepted now, in one statement: the
   * inbox's sweeper sends it to the workers even if nobody else does, so the caller's send to the bus is
   * only the fast path. Of two retries at once, one takes it. Undefined when the letter is gone; throws
   * `NotRetryableError` for an entry that holds no command the inbox can store (discard it instead).
   */
  async retry(id: string): Promise<DeadLetter | undefined> {
    const letter = await this.find(id);
    if (!letter) return undefined;
    if (!letter.envelope)
      throw new NotRetryableError(`dead letter ${id} is not a valid command; discard it instead`);
    try {
      const { rows } = await this.db.query<Row>(
        `WITH taken AS (
           DELETE FROM dead_letters WHERE id = $1 AND envelope IS NOT NULL RETURNING *
         ), back AS (
           INSERT INTO command_inbox (command_id, actor_id, envelope, resent_at)
           SELECT e->>'commandId', e->'actor'->>'id', e, now()
           FROM (SELECT envelope::jsonb AS e FROM taken) letter
           ON CONFLICT (command_id) DO UPDATE
             SET settled_at = NULL, accepted_at = now(), resent_at = now()
             WHERE command_inbox.settled_at IS NOT NULL
         )
         SELECT ${COLUMNS} FROM taken`,
        [id],
      );
      return rows[0] && toLetter(rows[0]);
    } catch (error) {
      if (!unstorable(error)) throw error;
      throw new NotRetryableError(
        `dead letter ${id} holds characters the database cannot store; discard it instead`,
      );
    }
  }

  /** Takes the letter out for good; undefined when it was already gone. */
  async discard(id: string): Promise<DeadLetter | undefined> {
    const { rows } = await this.db.query<Row>(`DELETE FROM dead_letters WHERE id = $1 RETURNING ${COLUMNS}`, [
      id,
    ]);
    return rows[0] && toLetter(rows[0]);
  }
}
