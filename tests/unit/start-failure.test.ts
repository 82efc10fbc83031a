import { describe, expect, it } from 'vitest';
import { ConfigError } from '#infra/config.ts';
import { startFailureLine } from '#web/start-failure.ts';

/** A failure of `listen`, as Node makes it. */
const listenError = (code: string, port: number) =>
  Object.assign(new Error(`listen ${code}: 127.0.0.1:${port}`), {
    code,
    syscall: 'listen',
    address: '127.0.0.1',
    port,
  });

describe('the line a failed start prints', () => {
  it('a PORT this user may not open (below 1024, not root) names PORT and what to type', () => {
    // As `PORT=80 npm start` by an ordinary user: it printed Node's EACCES and its stack trace.
    expect(startFailureLine(listenError('EACCES', 80), { PORT: '80' })).toBe(
      'Invalid configuration: PORT="80" — expected a port this user may open: from 1024 to 65535 (lower ones need administrator rights).',
    );
  });

  it('a port in use, an unknown HOST and a configuration error each get their line', () => {
    expect(startFailureLine(listenError('EADDRINUSE', 3000), {})).toBe(
      'Port 3000 is already in use. Set PORT to another port.',
    );
    const unknownHost = Object.assign(new Error('getaddrinfo ENOTFOUND nowhere'), { code: 'ENOTFOUND' });
    expect(startFailureLine(unknownHost, { HOST: 'nowhere' })).toBe(
      'Invalid configuration: HOST="nowhere" — expected an address of this machine (e.g. 127.0.0.1 or 0.0.0.0).',
    );
    expect(startFailureLine(new ConfigError('Invalid configuration: PORT="x"'), {})).toBe(
      'Invalid configuration: PORT="x"',
    );
  });

  it('a failure nobody foresaw gets no line of its own (it is printed with its stack)', () => {
    expect(startFailureLine(new Error('something else'), {})).toBeUndefined();
    // EACCES from anything but listen (a file) is not about the port.
    const file = Object.assign(new Error('EACCES: permission denied, open x'), {
      code: 'EACCES',
      syscall: 'open',
    });
    expect(startFailureLine(file, { PORT: '80' })).toBeUndefined();
  });
});
