import { describe, expect, it } from 'vitest';
import { findDisagreements, sessionKeyOf, type LiveInstance } from '#infra/instances.ts';

const instance = (
  instanceId: string,
  sessionKey: string | null,
  redisPrefix: string | null,
): LiveInstance => ({
  instanceId,
  role: 'web',
  host: 'h',
  pid: 1,
  sessionKey,
  redisPrefix,
  startedAt: new Date(0),
  seenAt: new Date(0),
});

describe('instance settings', () => {
  it('agree when every instance that has a value has the same one', () => {
    expect(
      findDisagreements([instance('a', 'k1', 'p:'), instance('b', 'k1', 'p:'), instance('w', null, null)]),
    ).toEqual([]);
    expect(findDisagreements([])).toEqual([]);
  });

  it('group the instances by value, the largest group first, for each setting that differs', () => {
    const found = findDisagreements([
      instance('c', 'k2', 'p:'),
      instance('a', 'k1', 'p:'),
      instance('b', 'k1', 'q:'),
    ]);
    expect(found.map((d) => [d.setting, d.groups])).toEqual([
      [
        'SESSION_SECRET',
        [
          { value: 'k1', instances: ['a', 'b'] },
          { value: 'k2', instances: ['c'] },
        ],
      ],
      [
        'REDIS_PREFIX',
        [
          { value: 'p:', instances: ['a', 'c'] },
          { value: 'q:', instances: ['b'] },
        ],
      ],
    ]);
    expect(found[0]?.consequence).toContain('403');
  });

  it('fingerprint a secret the same way every time, differently for another, without showing it', () => {
    const secret = 'x'.repeat(40);
    expect(sessionKeyOf(secret)).toBe(sessionKeyOf(secret));
    expect(sessionKeyOf(secret)).not.toBe(sessionKeyOf('y'.repeat(40)));
    expect(sessionKeyOf(secret)).toMatch(/^[0-9a-f]{12}$/);
  });
});
