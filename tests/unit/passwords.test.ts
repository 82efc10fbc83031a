import { describe, expect, it } from 'vitest';
import { dummyHash, hashPassword, verifyPassword } from '#infra/passwords.ts';

const shape = (stored: string) => {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  return { scheme, n, r, p, salt: salt?.length, hash: hash?.length };
};

describe('passwords', () => {
  it('a stored hash verifies its own password and no other', async () => {
    const stored = await hashPassword('correct horse battery');
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
    expect(await verifyPassword('correct horse batterz', stored)).toBe(false);
  });

  it('the stand-in for a missing account is ready at once and costs what a real check costs', async () => {
    // Sign-in checks an unknown email against it, so that answer takes as long as a wrong password.
    // Made lazily by hashing, the first unknown email paid for two hashes: a timing tell.
    const stand = dummyHash();
    expect(typeof stand).toBe('string');
    expect(shape(stand)).toEqual(shape(await hashPassword('anything at all')));
    expect(await verifyPassword('', stand)).toBe(false);
  });
});
