/**
 * Which real services the integration suites use. `tests/run-all.ts` probes them and sets these;
 * a suite never skips silently: a backend missing here is reported by the runner (and fails CI).
 */
export const testDatabaseUrl = process.env.TEST_DATABASE_URL || undefined;
export const testRedisUrl = process.env.TEST_REDIS_URL || undefined;

export type BackendKind = 'embedded' | 'postgres';

/** The database backends every contract suite runs against. */
export const databaseBackends: BackendKind[] = testDatabaseUrl ? ['embedded', 'postgres'] : ['embedded'];
