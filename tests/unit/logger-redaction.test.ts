import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '#infra/logger.ts';

/** The log never holds a password, whichever form's field carried it (sign-in, add user, /account). */
describe('the logger', () => {
  it('hides every password field at the top of a line and one level down, and keeps the rest', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const log = createLogger('info', sink);
    const secrets = {
      password: 'secret-one',
      currentPassword: 'secret-two',
      newPassword: 'secret-three',
      repeatPassword: 'secret-four',
    };
    log.info({ ...secrets, userId: 'u-1' }, 'top');
    log.info({ body: { ...secrets, email: 'a@b.test' } }, 'nested');
    const text = lines.join('');
    for (const secret of Object.values(secrets)) expect(text).not.toContain(secret);
    expect(text.match(/\[Redacted\]/g)).toHaveLength(8);
    expect(text).toContain('"userId":"u-1"');
    expect(text).toContain('"email":"a@b.test"');
  });
});
