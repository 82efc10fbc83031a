import { randomBytes } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import { startOfLog } from '#events/envelope.ts';
import type { Queryable } from '#infra/db/database.ts';
import { prepared } from '#infra/db/prepared.ts';
import { reportingWrite, type WriteReport } from '#infra/db/write-report.ts';
import { sessionTokenPattern } from '../input.server.ts';
import type { SessionUser } from '../pages/page-context.ts';
import { BACKGROUND_HEADER } from '../background-request.ts';
import { markOf, type LiveMark } from '../realtime/live-mark.ts';
import {
  anonTokenPattern,
  anonTokenReplacing,
  hmac,
  memoHmac,
  newAnonToken,
  setCookie,
  type CookieNames,
} from './cookies.server.ts';
import type { SessionSignals } from './session-signals.server.ts';

export interface SessionOptions {
  db: Queryable;
  secret: string;
  https: boolean;
  cookies: CookieNames;
  /** Signed-in sessions end after this long without a request (default 12 h). */
  idleMs?: number;
  /** …and after this long in any case (default 7 days). */
  absoluteMs?: number;
  /**
   * Live sessions one user may hold (default 50, SESSIONS_PER_USER): a sign-in beyond it ends the user's
   * least recently used ones (docs/decisions/0027).
   */
  maxPerUser?: number;
  /** Told when a session ends here (sign-out), so live sockets bound to it close on every instance. */
  signals?: SessionSignals;
  /** Told how each write of a session went (see readiness: "database (writes)"). */
  onWrite?: WriteReport;
}

const IDLE_MS = 12 * 60 * 60 * 1000;
const ABSOLUTE_MS = 7 * 24 * 60 * 60 * 1000;
const MAX_PER_USER = 50; // SESSIONS_PER_USER's default (infra/config.ts)
/** last_seen_at is written at most this often, not on every request. */
const TOUCH_MS = 60 * 1000;

const newToken = () => randomBytes(32).toString('base64url');

const sessionIdText = (token: string) => `session:${token}`;
/** The row id of a session: an HMAC of the cookie's token (the token itself is never stored). */
export const sessionIdOf = (secret: string, token: string): string => hmac(secret, sessionIdText(token));

export interface LiveSession {
  user: SessionUser;
  /** When this session ends unless a request comes first (idle), or at the latest (absolute). */
  endsAt: Date;
  /**
   * The competitor list's checkpoint (live-mark.ts), read in the same statement (before anything the request reads
   * after it): where a page rendered for this request starts its live updates (live-marks.server.ts).
   * In this statement, not one of its own, because every page would pay a round trip for it (measured:
   * 10–13% of a page's throughput).
   */
  listMark: LiveMark;
}

/**
 * A session by id with its user, or undefined (unknown, expired, idle too long, the user was disabled, or
 * their password was stored after it signed in — such a session is deleted). `touch` records a request
 * (sockets re-checking, and a page's own background requests, do not). A password set signs out whoever signed in with the old one the moment
 * its hash is stored, even where nobody deletes their sessions (an operator's command or a request cut
 * short between the two); a change recorded but never stored (its hash not replaced) signs nobody out.
 */
export async function sessionById(
  options: SessionOptions,
  id: string,
  touch = true,
): Promise<LiveSession | undefined> {
  const { db } = options;
  const { rows } = await db.query<
    SessionUser & {
      disabled: boolean;
      signedInBeforePasswordSet: boolean;
      lastSeen: Date;
      createdAt: Date;
      expiresAt: Date;
      listMark: string | null;
    }
  >(
    prepared(
      `SELECT u.id, u.email, u.display_name AS name, u.role, u.disabled,
              (s.created_at < c.updated_at) IS TRUE AS "signedInBeforePasswordSet",
              s.last_seen_at AS "lastSeen",
              s.created_at AS "createdAt", s.expires_at AS "expiresAt",
              (SELECT transaction_id::text || ':' || position FROM projection_checkpoints
                WHERE projection = 'competitor-list') AS "listMark"
       FROM sessions s JOIN user_list u ON u.id = s.user_id
       LEFT JOIN user_credentials c ON c.user_id = s.user_id
       WHERE s.id = $1 AND s.expires_at > now()`,
      [id],
    ),
  );
  const row = rows[0];
  if (!row) return undefined;
  const now = Date.now();
  const idleMs = options.idleMs ?? IDLE_MS;
  const hardEnd = Math.min(
    row.createdAt.getTime() + (options.absoluteMs ?? ABSOLUTE_MS),
    row.expiresAt.getTime(),
  );
  const endsAt = Math.min(row.lastSeen.getTime() + idleMs, hardEnd);
  if (row.disabled || row.signedInBeforePasswordSet || now >= endsAt) {
    await write(options, 'DELETE FROM sessions WHERE id = $1', [id]);
    return undefined;
  }
  const user = { id: row.id, email: row.email, name: row.name, role: row.role };
  const listMark = row.listMark ?? markOf(startOfLog);
  if (touch && now - row.lastSeen.getTime() > TOUCH_MS) {
    await write(options, 'UPDATE sessions SET last_seen_at = now() WHERE id = $1', [id]);
    return { user, endsAt: new Date(Math.min(now + idleMs, hardEnd)), listMark };
  }
  return { user, endsAt: new Date(endsAt), listMark };
}

/**
 * Server-side sessions. The cookie holds a random token; the table holds only its HMAC, so neither a
 * database leak nor a guessed id yields a live session. Every request re-reads the user's role and
 * disabled flag, so a role change or a disabled account takes effect at once.
 */
export function sessionMiddleware(options: SessionOptions): Middleware {
  const { https, cookies } = options;
  // sessionIdOf, kept per token: a session's requests ask for the same id again and again.
  const idOf = memoHmac(options.secret);
  return async (ctx, next) => {
    const raw = ctx.cookies.get(cookies.session);
    // A cookie that is not even shaped like a token is cleared without a database lookup.
    const token = raw && sessionTokenPattern.test(raw) ? raw : undefined;
    ctx.state.user = undefined;
    if (raw && !token) setCookie(ctx, cookies.session, null, { https });
    if (token) {
      // The page's own requests (position checks, refreshes) are served but are not activity.
      const active = ctx.get(BACKGROUND_HEADER) !== '1';
      const session = await sessionById(options, idOf(sessionIdText(token)), active);
      if (session) {
        ctx.state.user = session.user;
        ctx.state.sessionToken = token;
        ctx.state.listMark = session.listMark;
      } else {
        setCookie(ctx, cookies.session, null, { https });
      }
    }
    await next();
  };
}

/**
 * Signs in: a new session id (no fixation), the browser's previous session removed. Returns the new
 * session's row id (for `endSessionsBeyondCap`).
 *
 * `signInKey` is the sign-in form's idempotency key. A browser that sends the same sign-in twice (a double
 * click, a retry of the POST) keeps only the last answer's cookie: a random token per request left the
 * other request's session behind, live and held by nobody. With the key, the token is derived from the
 * form's key, the browser's anonymous cookie and the user, so both requests set the same cookie and the
 * second finds the first's row. The anonymous cookie is replaced here, so no later sign-in (not even the
 * same form submitted again) can derive a token that existed before; the new one names the form token it
 * replaced, so that form sent again later is answered as what it is (stale-sign-in.server.tsx).
 */
export async function startSession(
  ctx: Context,
  options: SessionOptions,
  userId: string,
  signInKey?: string,
): Promise<string> {
  const anon = ctx.cookies.get(options.cookies.anon);
  const token =
    signInKey && !ctx.state.sessionToken && anon && anonTokenPattern.test(anon)
      ? hmac(options.secret, `sign-in:${anon}:${signInKey}:${userId}`)
      : newToken();
  await endSession(ctx, options);
  const absoluteMs = options.absoluteMs ?? ABSOLUTE_MS;
  const id = sessionIdOf(options.secret, token);
  await write(
    options,
    `INSERT INTO sessions (id, user_id, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))
     ON CONFLICT (id) DO UPDATE SET last_seen_at = now()`,
    [id, userId, absoluteMs / 1000],
  );
  setCookie(ctx, options.cookies.session, token, { https: options.https });
  const formToken = ctx.state.csrfToken as string | undefined;
  const nextAnon = formToken ? anonTokenReplacing(options.secret, formToken) : newAnonToken();
  setCookie(ctx, options.cookies.anon, nextAnon, { https: options.https });
  ctx.state.sessionToken = token;
  return id;
}

/**
 * Ends the user's sessions beyond `maxPerUser`, least recently used first (the device in daily use stays
 * signed in; the one forgotten goes), never `keep` (the session just signed in). Returns how many. Sessions already dead
 * (idle or past their end) are removed too and never count. Their sockets are told through the same
 * `user-changed` signal a disable sends (decision 0010): each re-checks its session and closes if gone.
 */
export async function endSessionsBeyondCap(
  options: SessionOptions,
  userId: string,
  keep: string,
): Promise<number> {
  const max = options.maxPerUser ?? MAX_PER_USER;
  const result = await write(
    options,
    `DELETE FROM sessions WHERE user_id = $1 AND id <> $2 AND id NOT IN (
       SELECT id FROM sessions
       WHERE user_id = $1 AND id <> $2 AND expires_at > now()
         AND last_seen_at > now() - make_interval(secs => $3)
         AND created_at > now() - make_interval(secs => $4)
       ORDER BY last_seen_at DESC, created_at DESC
       LIMIT $5)`,
    [userId, keep, (options.idleMs ?? IDLE_MS) / 1000, (options.absoluteMs ?? ABSOLUTE_MS) / 1000, max - 1],
  );
  const ended = result.rowCount ?? 0;
  if (ended > 0) await options.signals?.publish({ kind: 'user-changed', userId });
  return ended;
}

/** Signs out on the server: the row is deleted, so the cookie is worthless even if copied. */
export async function endSession(ctx: Context, options: SessionOptions): Promise<void> {
  const token = ctx.cookies.get(options.cookies.session);
  if (token) {
    const sessionId = sessionIdOf(options.secret, token);
    await write(options, 'DELETE FROM sessions WHERE id = $1', [sessionId]);
    await options.signals?.publish({ kind: 'session-ended', sessionId });
  }
  setCookie(ctx, options.cookies.session, null, { https: options.https });
  ctx.state.sessionToken = undefined;
  ctx.state.user = undefined;
}

/** A write of the sessions table, its outcome told to `onWrite`. */
const write = (options: SessionOptions, text: string, values: unknown[]) =>
  reportingWrite(options.onWrite, options.db.query(text, values));

/** Removes expired sessions; run now and then. */
export async function purgeExpiredSessions(db: Queryable): Promise<number> {
  const result = await db.query(
    `DELETE FROM sessions WHERE expires_at < now() OR last_seen_at < now() - interval '7 days'`,
  );
  return result.rowCount ?? 0;
}

/**
 * Ends the user's sessions signed in before the event at `position` (a password reset: whoever signed in
 * with the old password is signed out; a sign-in with the new one, after it, stays). Their sockets close
 * on the `user-changed` signal the user feed sends for the event (web/realtime/user-feed.server.ts).
 */
export async function endSessionsSignedInBefore(
  db: Queryable,
  userId: string,
  position: number,
): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM sessions WHERE user_id = $1
       AND created_at <= (SELECT recorded_at FROM events WHERE position = $2)`,
    [userId, position],
  );
  return rowCount ?? 0;
}

/**
 * Ends the sessions a disable ended: those signed in before its event (`position`, the outcome's), or,
 * for a disable that changed nothing (the account was disabled already), every session while the account
 * is still disabled. Not simply all of the user's sessions: the same request sent again (same key) gets
 * the first outcome, and an account enabled since then has sessions signed in after it that the disable
 * never ended (a replay signed the user out; found by review, helper-42).
 */
export async function endSessionsDisabledBy(
  db: Queryable,
  userId: string,
  position: number | undefined,
): Promise<void> {
  await db.query(
    `DELETE FROM sessions WHERE user_id = $1
       AND (created_at <= (SELECT recorded_at FROM events WHERE position = $2)
            OR ($2::bigint IS NULL AND EXISTS (SELECT 1 FROM user_list WHERE id = $1 AND disabled)))`,
    [userId, position ?? null],
  );
}
