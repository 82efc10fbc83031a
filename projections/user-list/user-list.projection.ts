import type { Recorded } from '#events/envelope.ts';
import type { UserEvent } from '#events/user/events.ts';
import { defineProjection } from '../projection.ts';

const userTypes = new Set([
  'UserAdded',
  'UserRoleChanged',
  'UserDisabled',
  'UserEnabled',
  'UserPasswordReset',
  'UserPasswordChanged',
]);

/**
 * Users for sign-in, authorization and the /users page. Few rows, so one statement per event is fine.
 * Version 2: text composed (NFC) as events are now read, so names and notes typed with combining
 * accents are found by a search typed the other way (decision 0024).
 */
export const userListProjection = defineProjection({
  name: 'user-list',
  version: 2,
  tables: ['user_list'],
  handles: [...userTypes],

  async apply(db, events, tables) {
    for (const event of events.filter((e) => userTypes.has(e.type)) as Recorded<UserEvent>[]) {
      const at = event.metadata.at;
      switch (event.type) {
        case 'UserAdded':
          await db.query(
            `INSERT INTO ${tables.user_list} (id, email, display_name, role, disabled, created_at, updated_at)
             VALUES ($1, $2, $3, $4, false, $5, $5) ON CONFLICT (id) DO NOTHING`,
            [event.data.userId, event.data.email, event.data.displayName, event.data.role, at],
          );
          break;
        case 'UserRoleChanged':
          await db.query(`UPDATE ${tables.user_list} SET role = $2, updated_at = $3 WHERE id = $1`, [
            event.data.userId,
            event.data.role,
            at,
          ]);
          break;
        case 'UserDisabled':
        case 'UserEnabled':
          await db.query(`UPDATE ${tables.user_list} SET disabled = $2, updated_at = $3 WHERE id = $1`, [
            event.data.userId,
            event.type === 'UserDisabled',
            at,
          ]);
          break;
        case 'UserPasswordReset':
        case 'UserPasswordChanged':
          // No column shows it; handled so that the user feed signs the user's sockets out.
          break;
      }
    }
  },
});
