import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hmac, memoHmac } from '#web/auth/cookies.server.ts';
import { sessionIdOf } from '#web/auth/sessions.server.ts';

const secret = 'm'.repeat(40);

describe('memoHmac (form tokens and session ids kept per token)', () => {
  it('answers what hmac answers, for any value, asked once or again, among other values', () => {
    const memo = memoHmac(secret, 50);
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 80 }), { maxLength: 30 }), (values) => {
        for (const value of [...values, ...values.reverse()]) expect(memo(value)).toBe(hmac(secret, value));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps at most its bound, and still answers right for what it let go', () => {
    const memo = memoHmac(secret, 3);
    for (const value of ['a', 'b', 'c', 'd', 'e']) memo(value);
    expect(memo.size).toBe(3);
    expect(memo('a')).toBe(hmac(secret, 'a'));
    expect(memo.size).toBe(3);
  });

  it('is the session id the sign-in stored, for the session middleware', () => {
    const memo = memoHmac(secret);
    const token = 'T'.repeat(43);
    expect(memo(`session:${token}`)).toBe(sessionIdOf(secret, token));
  });
});
