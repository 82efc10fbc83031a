import { randomBytes } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import type { Queryable } from '#infra/db/database.ts';
import type { SessionUser } from '../pages/page-context.ts';
import { hmac, setCookie, type CookieNames } from './cookies.server.ts';

export interface SessionOptions {
  db: Queryable;
  secret: string;
  https: boolean;
  cookies: CookieNames;
  /** Signed-in sessions end after this long without a request (default 12 h). */
  idleMs?: number;
  /** …and after this long in any case (default 7 days). */
  absoluteMs?: number;
}

const IDLE_MS = 12 * 60 * 60 * 1000;
const ABSOLUTE_MS = 7 * 24 * 60 * 60 * 1000;
/** last_seen_at is written at most this often, not on every request. */
const TOUCH_MS = 60 * 1000;

const newToken = () => randomBytes(32).toString('base64url');

/**
 * The signed-in user for a session token, or undefined (unknown, expired, idle too long, or the user
 * was disabled — such a session is deleted). Shared by HTTP requests and realtime connections.
 */
export async function userForToken(options: SessionOptions, token: string): Promise<SessionUser | undefined> {
  const { db, secret } = options;
  const id = hmac(secret, `session:${token}`);
  const { rows } = await db.query<SessionUser & { disabled: boolean; lastSeen: Date; createdAt: Date }>(
    `SELECT u.id, u.email, u.display_name AS name, u.role, u.disabled, s.last_seen_at AS "lastSeen", s.created_at AS "createdAt"
     FROM sessions s JOIN user_list u ON u.id = s.user_id
     WHERE s.id = $1 AND s.expires_at > now()`,
    [id],
  );
  const row = rows[0];
  if (!row) return undefined;
  const now = Date.now();
  const expired =
    row.disabled ||
    now - row.lastSeen.getTime() > (options.idleMs ?? IDLE_MS) ||
    now - row.createdAt.getTime() > (options.absoluteMs ?? ABSOLUTE_MS);
  if (expired) {
    await db.query('DELETE FROM sessions WHERE id = $1', [id]);
    return undefined;
  }
  if (now - row.lastSeen.getTime() > TOUCH_MS)
    await db.query('UPDATE sessions SET last_seen_at = now() WHERE id = $1', [id]);
  return { id: row.id, email: row.email, name: row.name, role: row.role };
}

/**
 * Server-side sessions. The cookie holds a random token; the table holds only its HMAC, so neither a
 * database leak nor a guessed id yields a live session. Every request re-reads the user's role and
 * disabled flag, so a role change or a disabled account takes effect at once.
 */
export function sessionMiddleware(options: SessionOptions): Middleware {
  const { https, cookies } = options;
  return async (ctx, next) => {
    const token = ctx.cookies.get(cookies.session);
    ctx.state.user = undefined;
    if (token) {
      const user = await userForToken(options, token);
      if (user) {
        ctx.state.user = user;
        ctx.state.sessionToken = token;
      } else {
        setCookie(ctx, cookies.session, null, { https });
      }
    }
    await next();
  };
}

/** Signs in: always a brand-new session id (no fixation), the old one removed. */
export async function startSession(ctx: Context, options: SessionOptions, userId: string): Promise<void> {
  await endSession(ctx, options);
  const token = newToken();
  const absoluteMs = options.absoluteMs ?? ABSOLUTE_MS;
  await options.db.query(
    `INSERT INTO sessions (id, user_id, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))`,
    [hmac(options.secret, `session:${token}`), userId, absoluteMs / 1000],
  );
  setCookie(ctx, options.cookies.session, token, { https: options.https });
  ctx.state.sessionToken = token;
}

/** Signs out on the server: the row is deleted, so the cookie is worthless even if copied. */
export async function endSession(ctx: Context, options: SessionOptions): Promise<void> {
  const token = ctx.cookies.get(options.cookies.session);
  if (token)
    await options.db.query('DELETE FROM sessions WHERE id = $1', [hmac(options.secret, `session:${token}`)]);
  setCookie(ctx, options.cookies.session, null, { https: options.https });
  ctx.state.sessionToken = undefined;
  ctx.state.user = undefined;
}

/** Removes expired sessions; run now and then. */
export async function purgeExpiredSessions(db: Queryable): Promise<number> {
  const result = await db.query(
    `DELETE FROM sessions WHERE expires_at < now() OR last_seen_at < now() - interval '7 days'`,
  );
  return result.rowCount ?? 0;
}
