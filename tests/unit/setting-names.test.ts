import { describe, expect, it } from 'vitest';
import { settingNames } from '#infra/config.ts';
import { lookingLikeWarning, settingsLookingLike } from '#infra/setting-names.ts';

describe('environment variables that look like a setting', () => {
  const like = (env: Record<string, string>) => settingsLookingLike(settingNames, env);

  it('names the setting a misspelt, mis-cased or run-together variable was meant to be', () => {
    expect(
      like({
        DATABSE_URL: 'postgres://db/rivals',
        port: '8080',
        LOGLEVEL: 'debug',
        DATADIR: '/srv/rivals',
        REDIS_URI: 'redis://cache',
        SESION_SECRET: 'x'.repeat(40),
        ROLES: 'web',
        Data_Dir: '/srv',
      }),
    ).toEqual([
      { name: 'DATABSE_URL', meant: 'DATABASE_URL' },
      { name: 'port', meant: 'PORT' },
      { name: 'LOGLEVEL', meant: 'LOG_LEVEL' },
      { name: 'DATADIR', meant: 'DATA_DIR' },
      { name: 'REDIS_URI', meant: 'REDIS_URL' },
      { name: 'SESION_SECRET', meant: 'SESSION_SECRET' },
      { name: 'ROLES', meant: 'ROLE' },
      { name: 'Data_Dir', meant: 'DATA_DIR' },
    ]);
  });

  it("says nothing of the settings themselves or of a shell's usual variables", () => {
    const env = {
      ...Object.fromEntries(settingNames.map((name) => [name, 'x'])),
      HOME: '/root',
      TERM: 'xterm',
      PGPORT: '5432',
      HOSTNAME: 'box',
      NODE_ENV: 'production',
      PWD: '/srv',
      USER: 'root',
      LANG: 'C.UTF-8',
      PATH: '/usr/bin',
      SHELL: '/bin/sh',
      TEST_DATABASE_URL: 'postgres://db/test',
      TEST_REDIS_URL: 'redis://cache',
      npm_config_port: '1',
    };
    expect(like(env)).toEqual([]);
  });

  it('the warning names the variable and the setting', () => {
    expect(lookingLikeWarning({ name: 'DATABSE_URL', meant: 'DATABASE_URL' })).toBe(
      'The environment variable DATABSE_URL is not a Rivals setting, so it is ignored: did you mean DATABASE_URL?',
    );
  });
});
