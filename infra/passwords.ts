import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** scrypt with N=2^17, r=8, p=1 (OWASP's recommendation); 128 MiB per hash, so maxmem is raised. */
const params = { N: 2 ** 17, r: 8, p: 1 };
const KEY_LENGTH = 32;

const derive = (password: string, salt: Buffer, options: ScryptOptions, length: number) =>
  new Promise<Buffer>((resolve, reject) =>
    scrypt(
      password.normalize('NFKC'),
      salt,
      length,
      { ...options, maxmem: 256 * 1024 * 1024 },
      (error, key) => (error ? reject(error) : resolve(key)),
    ),
  );

/** `scrypt$N$r$p$salt$hash`, base64url: parameters travel with the hash, so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, params, KEY_LENGTH);
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64url'), key.toString('base64url')].join(
    '$',
  );
}

/** Constant-time comparison; a malformed stored hash simply does not match. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(
    password,
    Buffer.from(salt, 'base64url'),
    { N: Number(n), r: Number(r), p: Number(p) },
    expected.length,
  );
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/**
 * A stored hash of no password at all: the same scheme and parameters with random salt and key, so
 * verifying against it costs what a real check costs and a missing account takes as long. Made
 * without hashing, so even the first unknown email costs one derivation, not two.
 */
const dummy = ['scrypt', params.N, params.r, params.p, randomBytes(16), randomBytes(KEY_LENGTH)]
  .map((part) => (Buffer.isBuffer(part) ? part.toString('base64url') : part))
  .join('$');
export const dummyHash = (): string => dummy;

export function randomPassword(): string {
  return randomBytes(15).toString('base64url');
}

export const PASSWORD_MIN_LENGTH = 12;
/** Sign-in refuses longer passwords (hashing one costs the same, reading it does not): none is ever set. */
export const PASSWORD_MAX_LENGTH = 1024;
