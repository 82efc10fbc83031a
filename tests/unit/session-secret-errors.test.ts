import { describe, expect, it } from 'vitest';
import { unusable } from '#web/session-secret.server.ts';

const systemError = (code: string, message = `${code}: system error`) =>
  Object.assign(new Error(message), { code });

describe('a session secret file that cannot be used', () => {
  const file = '/srv/rivals/session-secret';

  it('names the file, the reason and what to do for that reason', () => {
    expect(unusable(file, systemError('ENOSPC')).message).toBe(
      `The session secret file ${file} cannot be used (the disk is full). To go on, free some space on the disk, then start again.`,
    );
    expect(unusable(file, systemError('EROFS')).message).toBe(
      `The session secret file ${file} cannot be used (the file system is read-only). To go on, set DATA_DIR to a folder on a writable disk, or give the secret in SESSION_SECRET.`,
    );
    expect(unusable(file, systemError('EACCES')).message).toBe(
      `The session secret file ${file} cannot be used (permission denied). To go on, fix its owner or permissions.`,
    );
  });

  it('an error it has no words for keeps the system message and the general advice', () => {
    expect(unusable(file, systemError('EIO', 'EIO: i/o error, read')).message).toBe(
      `The session secret file ${file} cannot be used (EIO: i/o error, read). It must be a file this user can read and write: fix its owner or permissions, or delete it to make a new one (everyone is signed out).`,
    );
  });
});
