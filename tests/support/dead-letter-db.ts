import { afterAll, beforeAll, beforeEach } from 'vitest';
import { DeadLetterStore, type DeadLetter } from '#events/store/dead-letters.ts';
import { createTestDatabase, type TestDatabase } from './test-database.ts';

export interface DeadLetterDb {
  /** The store (valid inside tests: opened before the file's first test). */
  readonly store: DeadLetterStore;
  /** The stored letters without their row ids (which the database picks), oldest first. */
  stored(): Promise<Omit<DeadLetter, 'id'>[]>;
}

/**
 * The dead letters of a test file that runs buses without an app: a real store on an embedded database,
 * opened once for the file and emptied before each test.
 */
export function withDeadLetterDb(): DeadLetterDb {
  let db: TestDatabase | undefined;
  let store: DeadLetterStore | undefined;
  beforeAll(async () => {
    db = await createTestDatabase('embedded');
    store = new DeadLetterStore(db.pool);
  });
  afterAll(async () => {
    await db?.drop();
  });
  beforeEach(async () => {
    await db?.pool.query('TRUNCATE dead_letters');
  });
  const opened = () => {
    if (!store) throw new Error('the dead-letter database opens before the first test');
    return store;
  };
  return {
    get store() {
      return opened();
    },
    stored: async () => (await opened().list()).map(({ id: _id, ...letter }) => letter),
  };
}
