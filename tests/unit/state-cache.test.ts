import { describe, expect, it } from 'vitest';
import { competitorDecider } from '#services/competitor/competitor.ts';
import { competitorNameDecider } from '#services/competitor/competitor-name.ts';
import { StateCache } from '#services/state-cache.ts';

describe('state cache', () => {
  it('keeps folds per decider and stream', () => {
    const cache = new StateCache();
    cache.set(competitorNameDecider, 's', { holder: 'a' }, 1);
    expect(cache.get(competitorNameDecider, 's')).toEqual({ state: { holder: 'a' }, version: 1 });
    expect(cache.get(competitorDecider, 's')).toBeUndefined();
    expect(cache.get(competitorNameDecider, 'other')).toBeUndefined();
  });

  it('drops the least recently used entry when full', () => {
    const cache = new StateCache(2);
    cache.set(competitorNameDecider, 'a', { holder: null }, 1);
    cache.set(competitorNameDecider, 'b', { holder: null }, 1);
    cache.get(competitorNameDecider, 'a'); // a is now the most recent
    cache.set(competitorNameDecider, 'c', { holder: null }, 1);
    expect(cache.size).toBe(2);
    expect(cache.get(competitorNameDecider, 'b')).toBeUndefined();
    expect(cache.get(competitorNameDecider, 'a')).toBeDefined();
    expect(cache.get(competitorNameDecider, 'c')).toBeDefined();
  });
});
