import { z } from 'zod';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from './passwords.ts';

/**
 * The environment, parsed once at start-up. Everything else receives a `Config`;
 * nothing reads `process.env` after this.
 */
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `one of ${values.join(', ')}` });
const booleanFlag = oneOf(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/**
 * Digits only: `z.coerce.number` alone took " 80", "0x50" and "8e1" as port 80.
 * The message names the range and the unit, as every other variable's does.
 */
const wholeNumber = (min: number, max: number, unit: string) => {
  const expected = `a whole number of ${unit} from ${min} to ${max}`;
  return z
    .string()
    .regex(/^\d+$/, expected)
    .transform(Number)
    .pipe(z.number().int(expected).min(min, expected).max(max, expected));
};
const milliseconds = (min: number, max: number) => wholeNumber(min, max, 'milliseconds');

const schema = z.object({
  PORT: z
    .string()
    .regex(/^\d+$/, 'an integer from 1 to 65535')
    .transform(Number)
    .pipe(z.number().int().min(1, 'an integer from 1 to 65535').max(65535, 'an integer from 1 to 65535'))
    .default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATA_DIR: z.string().min(1, 'a folder path').default('./data'),
  DATABASE_URL: z
    .url({ protocol: /^postgres(ql)?$/, error: 'a postgres:// or postgresql:// URL' })
    .optional(),
  REDIS_URL: z.url({ protocol: /^rediss?$/, error: 'a redis:// or rediss:// URL' }).optional(),
  SESSION_SECRET: z.string().min(32, 'at least 32 characters').optional(),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ROLE: oneOf(['all', 'web', 'worker']).default('all'),
  /**
   * `true` when a TLS-terminating proxy sits in front: the site is https, Secure cookies, HSTS. `http` for
   * a proxy that serves plain HTTP (docker-compose's nginx). With either, the client's address is the last
   * X-Forwarded-For entry (or every user would share the proxy's address and its sign-in limits) and the
   * site's host the last X-Forwarded-Host, if sent (web/site-origin.server.ts). Default false.
   */
  TRUST_PROXY: oneOf(['true', 'false', '1', '0', 'http'])
    .transform((v) => (v === 'http' ? v : v === 'true' || v === '1'))
    .default(false),
  /** Seed demo competitors into an empty database on first start (default true). */
  DEMO_DATA: booleanFlag.default(true),
  /** Bootstrap admin for an empty user table; a random password is generated when unset. */
  ADMIN_EMAIL: z.email('an email address').default('admin@rivals.local'),
  /**
   * What sign-in can take (PASSWORD_MIN/MAX_LENGTH, and no control character: a browser's password field
   * cannot send one): a longer one, or one with a tab, made an admin nobody could sign in as.
   */
  ADMIN_PASSWORD: z
    .string()
    .min(PASSWORD_MIN_LENGTH, `at least ${PASSWORD_MIN_LENGTH} characters`)
    .max(PASSWORD_MAX_LENGTH, `at most ${PASSWORD_MAX_LENGTH} characters (sign-in takes no longer ones)`)
    .regex(
      // eslint-disable-next-line no-control-regex -- matching control characters is the point
      /^[^\u0000-\u001f\u007f-\u009f]*$/,
      'no control characters (such as tabs or line breaks): a browser cannot send them',
    )
    .optional(),
  /** A command left unacknowledged this long by a worker that died is handed to another (default 30 s). */
  BUS_CLAIM_IDLE_MS: milliseconds(100, 3_600_000).default(30_000),
  /** An accepted command still unhandled this long is put on the bus again (default 10 s). */
  INBOX_RESEND_AFTER_MS: milliseconds(100, 3_600_000).default(10_000),
  /** A worker silent this long (and holding nothing) is removed from the consumer group (default 1 h). */
  BUS_CONSUMER_IDLE_MS: milliseconds(10_000, 604_800_000).default(3_600_000),
  /** Bearer token operators' scrapers send to read /metrics; unset = /metrics is off (404). */
  METRICS_TOKEN: z
    .string()
    .regex(/^[\x21-\x7e]{24,256}$/, '24 to 256 printable characters without spaces')
    .optional(),
  /** /readyz answers 503 while a projection is more than this many events behind the log (default 10,000). */
  READY_MAX_LAG_EVENTS: wholeNumber(1, 100_000_000, 'events').default(10_000),
  /**
   * /readyz answers 503 while a projection has left an event it could read unprojected this long, and says
   * "held back" (still ready: decision 0022) while events wait this long behind a transaction left open
   * (default 60 s).
   */
  READY_MAX_LAG_SECONDS: wholeNumber(1, 86_400, 'seconds').default(60),
  /**
   * A searched table read waits at most this long for its turn, and on Postgres each of its statements runs
   * at most this long; past it the page answers 503 (docs/decisions/0026). Default 5 s.
   */
  SEARCH_TIMEOUT_MS: milliseconds(100, 600_000).default(5_000),
  /**
   * At most this many requests per RATE_LIMIT_WINDOW_SECONDS from one signed-in user (or one address
   * signed out), per instance; past it 429 with Retry-After. 0 turns it off. Default 600 per 10 s: a user
   * with several tables open while colleagues make changes every second refreshes far less; a script
   * looping on pages asks thousands of times a second.
   */
  RATE_LIMIT_REQUESTS: wholeNumber(0, 1_000_000, 'requests').default(600),
  RATE_LIMIT_WINDOW_SECONDS: wholeNumber(1, 3_600, 'seconds').default(10),
  /**
   * Live sessions one user may hold at once; a sign-in beyond it ends that user's least recently used
   * session (docs/decisions/0027). Default 50: every device a person uses, and a small team sharing one account.
   */
  SESSIONS_PER_USER: wholeNumber(1, 1_000, 'sessions').default(50),
  /** Prefix for every Redis key, so several deployments (or test runs) can share one Redis. */
  REDIS_PREFIX: z
    .string()
    .regex(/^[a-z0-9:_-]*$/i, 'letters, digits, ":", "_" or "-"')
    .default('rivals:'),
});

export type Config = z.infer<typeof schema> & { mode: 'embedded' | 'scaled' };

/** The environment variables Rivals reads (a close misspelling of one is warned about: setting-names.ts). */
export const settingNames: readonly string[] = Object.keys(schema.shape);

const secretVariables = new Set(['SESSION_SECRET', 'ADMIN_PASSWORD', 'METRICS_TOKEN']);

/**
 * A value as an error message may show it (messages reach logs and terminals): a secret by its length
 * only, a password inside a URL or a keyword string masked.
 */
function shown(name: string, value: string): string {
  if (secretVariables.has(name)) return `(${value.length} characters, hidden)`;
  return JSON.stringify(
    value
      // user:password@host, with or without the scheme's //
      .replace(/^((?:[a-z][\w+.-]*:\/\/)?[^:/@\s]*:)[^@\s]*@/i, '$1***@')
      // password=… in a query string or in libpq's keyword form
      .replace(/\b(password|passwd|pass|pwd|secret|token)=[^&\s]*/gi, '$1=***'),
  );
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Parses the environment or throws a `ConfigError` whose message is one line a person can act on.
 * Operator commands (`forServing: false`) sign no sessions, so they do not need `SESSION_SECRET`.
 */
export function loadConfig(
  env: Record<string, string | undefined>,
  { forServing = true }: { forServing?: boolean } = {},
): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(present);
  if (!result.success) {
    const issue = result.error.issues[0];
    const name = String(issue?.path[0] ?? 'environment');
    const value = env[name];
    throw new ConfigError(
      `Invalid configuration: ${name}=${shown(name, value ?? '')} — expected ${issue?.message ?? 'a valid value'}.`,
    );
  }
  const config = result.data;
  const mode = config.DATABASE_URL ? 'scaled' : 'embedded';
  if (config.REDIS_URL && !config.DATABASE_URL) {
    throw new ConfigError(
      'Invalid configuration: REDIS_URL is set without DATABASE_URL — expected both (scaled mode) or neither (embedded mode).',
    );
  }
  if (forServing && mode === 'scaled' && !config.SESSION_SECRET) {
    throw new ConfigError(
      'Invalid configuration: SESSION_SECRET="" — expected at least 32 characters when DATABASE_URL is set (instances must share it).',
    );
  }
  if (config.ROLE !== 'all' && !config.REDIS_URL) {
    throw new ConfigError(
      `Invalid configuration: ROLE=${JSON.stringify(config.ROLE)} — expected "all" unless REDIS_URL is set (web and worker instances talk through Redis).`,
    );
  }
  return { ...config, mode };
}
