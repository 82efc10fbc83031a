import { describe, expect, it } from 'vitest';
import { stableUuid } from '#services/bootstrap/bootstrap.ts';
import { checkPassword } from '#services/user/accounts.ts';
import { bootstrapAdmin } from '#services/user/bootstrap-admin.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { writeSide } from '#tests/support/runtime-pieces.ts';
import { createTestDatabase } from '#tests/support/test-database.ts';

/**
 * The first admin of a fresh install (README, "Defaults a newcomer gets"). Scaled out, every web
 * instance starts on the same empty database at once (docker-compose starts web-1 and web-2 together),
 * each with a random password of its own: only the instance whose password was stored may print it.
 */
describe.each(databaseBackends)('the first admin on %s', (backend) => {
  it('instances starting at once print one password, and it is the one that signs in', async () => {
    const db = await createTestDatabase(backend);
    try {
      const { store, route } = await writeSide(db);
      const options = { email: 'admin@rivals.test' };
      const printed = (
        await Promise.all([1, 2, 3].map(() => bootstrapAdmin(db.pool, store, route, options)))
      ).filter((admin) => admin !== undefined);
      expect(printed).toHaveLength(1);
      const userId = stableUuid('bootstrap:admin');
      expect(await checkPassword(db.pool, userId, printed[0]!.password)).toBe(true);
      // A later start finds the admin and prints nothing.
      expect(await bootstrapAdmin(db.pool, store, route, options)).toBeUndefined();
    } finally {
      await db.drop();
    }
  });
});
