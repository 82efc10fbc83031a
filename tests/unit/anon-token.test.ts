import { describe, expect, it } from 'vitest';
import {
  anonTokenPattern,
  anonTokenReplaced,
  anonTokenReplacing,
  hmac,
  newAnonToken,
} from '#web/auth/cookies.server.ts';

/** The anonymous cookie a sign-in leaves names the form token it replaced, and only that one (decision 0027). */
describe('the anonymous cookie a sign-in leaves', () => {
  const secret = 's'.repeat(40);
  const form = hmac(secret, `csrf:${newAnonToken()}`);

  it('is a valid anonymous cookie, fresh each time', () => {
    const one = anonTokenReplacing(secret, form);
    const two = anonTokenReplacing(secret, form);
    expect(one).toMatch(anonTokenPattern);
    expect(two).not.toBe(one);
  });

  it('names the form token it replaced, and no other', () => {
    const anon = anonTokenReplacing(secret, form);
    expect(anonTokenReplaced(secret, anon, form)).toBe(true);
    expect(anonTokenReplaced(secret, anon, hmac(secret, `csrf:${newAnonToken()}`))).toBe(false);
    expect(anonTokenReplaced(secret, anon, '')).toBe(false);
    expect(anonTokenReplaced('t'.repeat(40), anon, form)).toBe(false);
  });

  it('is not forged by a plain anonymous cookie, a changed tag or another length', () => {
    const anon = anonTokenReplacing(secret, form);
    expect(anonTokenReplaced(secret, newAnonToken(), form)).toBe(false);
    const flipped = `${anon.slice(0, -1)}${anon.endsWith('A') ? 'B' : 'A'}`;
    expect(anonTokenReplaced(secret, flipped, form)).toBe(false);
    expect(anonTokenReplaced(secret, `${anon}x`, form)).toBe(false);
    expect(anonTokenReplaced(secret, anon.slice(1), form)).toBe(false);
    // Another cookie's fresh part under this cookie's tag: the tag is bound to its own fresh part.
    const other = anonTokenReplacing(secret, form);
    expect(anonTokenReplaced(secret, `${other.slice(0, 24)}${anon.slice(24)}`, form)).toBe(false);
  });
});
