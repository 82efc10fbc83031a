/**
 * Which real services the integration suites use. A contract suite runs against every backend unless the
 * run says explicitly to leave one out: `RIVALS_TEST_SKIP=postgres,redis` (a comma list). A backend that
 * is neither given (`TEST_DATABASE_URL`, `TEST_REDIS_URL`) nor skipped fails its suite loudly, so a run
 * without the services can never pass by testing less. `tests/run-all.ts` sets the skip list for services
 * it could not reach, and refuses to skip anything on CI.
 */
export type Backend = 'postgres' | 'redis';

const variables: Record<Backend, string> = { postgres: 'TEST_DATABASE_URL', redis: 'TEST_REDIS_URL' };
const examples: Record<Backend, string> = {
  postgres: 'postgres://postgres@127.0.0.1:5432/test',
  redis: 'redis://127.0.0.1:6379',
};

export const skipVariable = 'RIVALS_TEST_SKIP';

/** Parses a skip list; an unknown name is an error, not a silent no-op. */
export function parseSkipList(value: string | undefined): Set<Backend> {
  const names = (value ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  for (const name of names) {
    if (!(name in variables))
      throw new Error(
        `${skipVariable}=${value}: unknown backend "${name}" (expected postgres and/or redis).`,
      );
  }
  return new Set(names as Backend[]);
}

export const skippedBackends: ReadonlySet<Backend> = parseSkipList(process.env[skipVariable]);

/** Whether the suites run their half for this backend (true unless skipped explicitly). */
export const runs = (backend: Backend): boolean => !skippedBackends.has(backend);

/** The URL of a backend under test; throws, naming the variable and the way to skip, when it is missing. */
export function backendUrl(backend: Backend): string {
  const variable = variables[backend];
  if (!runs(backend))
    throw new Error(
      `${backend} is skipped (${skipVariable}=${process.env[skipVariable]}), but this test needs it.`,
    );
  const url = process.env[variable];
  if (url) return url;
  throw new Error(
    `${variable} is not set, so the ${backend} half of this suite cannot run. ` +
      `Set it (e.g. ${variable}=${examples[backend]}) or skip that half explicitly with ${skipVariable}=${backend}.`,
  );
}

export type BackendKind = 'embedded' | 'postgres';

/** The database backends every contract suite runs against: the embedded one, and Postgres unless skipped. */
export const databaseBackends: BackendKind[] = runs('postgres') ? ['embedded', 'postgres'] : ['embedded'];

/** The command-bus / rate-limit stores the suites run against: memory, and Redis unless skipped. */
export const redisBackends: ('memory' | 'redis')[] = runs('redis') ? ['memory', 'redis'] : ['memory'];

/**
 * For the few tests that push thousands of commands through the single in-process PGlite connection:
 * alone they take seconds, but beside the other suites on two cores they can take minutes. A bound on
 * a hang, not a speed check (speed is measured in tests/bench).
 */
export const HEAVY_TEST_TIMEOUT_MS = 240_000;
