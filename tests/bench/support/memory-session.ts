import type { SessionUser } from '#web/pages/page-context.ts';

const user: SessionUser = {
  id: 'bench-admin',
  email: 'bench-admin@rivals.test',
  name: 'Bench Admin',
  role: 'admin',
};
const listMark = '1000:42';
const token = 'bench-session-token-0123456789abcdef';

/** The start of the session lookup's statement (sessions.server.ts). */
const SESSION_LOOKUP = 'SELECT u.id, u.email, u.display_name AS name, u.role, u.disabled';
let seen = 0;
let rows: unknown[] = [];

/**
 * A signed-in admin for koa-memory (page-server.tsx): the app's session lookup (sessions.server.ts
 * `sessionById`) answered from memory with a live session, seen just now (so it writes nothing back).
 */
export const memorySession = {
  user,
  listMark,
  cookie: `rivals_session=${token}`,
  answer: (text: string): unknown[] | undefined => {
    if (!text.startsWith(SESSION_LOOKUP)) return undefined;
    // Seen within the last 10 s (the app writes last_seen_at back only after a minute).
    const now = Date.now();
    if (now - seen > 10_000) {
      seen = now;
      rows = [
        {
          ...user,
          disabled: false,
          lastSeen: new Date(now),
          createdAt: new Date(now),
          expiresAt: new Date(now + 86_400_000),
          listMark,
        },
      ];
    }
    return rows;
  },
};
