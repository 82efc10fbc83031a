import { describe, expect, it } from 'vitest';
import { loadConfig } from '#infra/config.ts';

describe('configuration', () => {
  it('runs embedded with defaults when nothing is set', () => {
    expect(loadConfig({})).toMatchObject({
      mode: 'embedded',
      PORT: 3000,
      DATA_DIR: './data',
      ROLE: 'all',
      LOG_LEVEL: 'info',
      SESSIONS_PER_USER: 50,
    });
  });

  it.each([
    [{ PORT: 'abc' }, 'Invalid configuration: PORT="abc" — expected an integer from 1 to 65535.'],
    [{ PORT: '70000' }, 'Invalid configuration: PORT="70000" — expected an integer from 1 to 65535.'],
    // Number() reads all three as 80: a quoting slip or a hex value must not pick a port silently.
    [{ PORT: ' 80' }, 'Invalid configuration: PORT=" 80" — expected an integer from 1 to 65535.'],
    [{ PORT: '0x50' }, 'Invalid configuration: PORT="0x50" — expected an integer from 1 to 65535.'],
    [{ PORT: '8e1' }, 'Invalid configuration: PORT="8e1" — expected an integer from 1 to 65535.'],
    [
      { BUS_CLAIM_IDLE_MS: '1e4' },
      'Invalid configuration: BUS_CLAIM_IDLE_MS="1e4" — expected a whole number of milliseconds from 100 to 3600000.',
    ],
    [
      { READY_MAX_LAG_EVENTS: '-5' },
      'Invalid configuration: READY_MAX_LAG_EVENTS="-5" — expected a whole number of events from 1 to 100000000.',
    ],
    [
      { READY_MAX_LAG_SECONDS: '0' },
      'Invalid configuration: READY_MAX_LAG_SECONDS="0" — expected a whole number of seconds from 1 to 86400.',
    ],
    [
      { SESSIONS_PER_USER: '0' },
      'Invalid configuration: SESSIONS_PER_USER="0" — expected a whole number of sessions from 1 to 1000.',
    ],
    [
      { DATABASE_URL: 'mysql://db' },
      'Invalid configuration: DATABASE_URL="mysql://db" — expected a postgres:// or postgresql:// URL.',
    ],
    [
      { LOG_LEVEL: 'loud' },
      'Invalid configuration: LOG_LEVEL="loud" — expected one of fatal, error, warn, info, debug, trace, silent.',
    ],
    [{ ROLE: 'web' }, 'expected "all" unless REDIS_URL is set'],
    [{ DATABASE_URL: 'postgres://h/db' }, 'SESSION_SECRET'],
  ])('names the variable, the value and what is expected: %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it.each([
    [
      { ADMIN_PASSWORD: 'short-pw' },
      'ADMIN_PASSWORD=(8 characters, hidden) — expected at least 12 characters.',
    ],
    [
      { DATABASE_URL: 'postgres://h/db', SESSION_SECRET: 'almost-the-secret' },
      'SESSION_SECRET=(17 characters, hidden) — expected at least 32 characters.',
    ],
    [
      { DATABASE_URL: 'mysql://admin:hunter2-hunter2@db/x' },
      'DATABASE_URL="mysql://admin:***@db/x" — expected a postgres:// or postgresql:// URL.',
    ],
    [
      { DATABASE_URL: 'rivals:hunter2@db:5432/rivals' },
      'DATABASE_URL="rivals:***@db:5432/rivals" — expected a postgres:// or postgresql:// URL.',
    ],
    [
      { DATABASE_URL: 'host=db user=rivals password=hunter2' },
      'DATABASE_URL="host=db user=rivals password=***" — expected a postgres:// or postgresql:// URL.',
    ],
  ])('never shows a secret in its message: %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
    expect(() => loadConfig(env)).not.toThrow(/short-pw|almost-the-secret|hunter2/);
  });

  it('refuses an ADMIN_PASSWORD no sign-in could send: longer than 1,024 characters, or with a control character', () => {
    // Sign-in refuses passwords over 1,024 characters, and a browser's password field sends no tab or
    // line break: such an admin was created and could never sign in.
    expect(loadConfig({ ADMIN_PASSWORD: 'p'.repeat(1024) }).ADMIN_PASSWORD).toHaveLength(1024);
    expect(() => loadConfig({ ADMIN_PASSWORD: 'p'.repeat(1025) })).toThrow(
      'ADMIN_PASSWORD=(1025 characters, hidden) — expected at most 1024 characters (sign-in takes no longer ones).',
    );
    expect(() => loadConfig({ ADMIN_PASSWORD: 'correct horse\tbattery' })).toThrow(
      'ADMIN_PASSWORD=(21 characters, hidden) — expected no control characters (such as tabs or line breaks): a browser cannot send them.',
    );
  });

  it('runs scaled with a database, Redis and a secret', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://h/db',
      REDIS_URL: 'redis://h:6379',
      SESSION_SECRET: 's'.repeat(32),
      ROLE: 'worker',
    });
    expect(config).toMatchObject({ mode: 'scaled', ROLE: 'worker' });
  });

  it('operator commands sign no sessions: they run on a database without SESSION_SECRET, servers do not', () => {
    const env = { DATABASE_URL: 'postgres://h/db' };
    const operator = loadConfig(env, { forServing: false });
    expect(operator.mode).toBe('scaled');
    expect(operator.SESSION_SECRET).toBeUndefined();
    expect(() => loadConfig(env)).toThrow('SESSION_SECRET');
  });
});
