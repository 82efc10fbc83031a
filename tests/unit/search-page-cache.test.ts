import { describe, expect, it } from 'vitest';
import { createSearchPageCache, orderTerms } from '#projections/search-pages.ts';

const ids = (n: number, prefix = 'x') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('search page cache', () => {
  it('keeps the most recently used searches within its id budget', () => {
    const cache = createSearchPageCache({ maxIds: 10, maxIdsPerSearch: 10 });
    cache.set('a', { version: '1', ids: ids(4, 'a') });
    cache.set('b', { version: '1', ids: ids(4, 'b') });
    // Using `a` makes `b` the oldest: adding `c` (4 more, 12 in all) drops `b`.
    expect(cache.get('a')?.ids).toHaveLength(4);
    cache.set('c', { version: '1', ids: ids(4, 'c') });
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.ids[0]).toBe('a0');
    expect(cache.get('c')?.ids[3]).toBe('c3');
  });

  it('replaces a search read again at a newer version, counting only the new ids', () => {
    const cache = createSearchPageCache({ maxIds: 10, maxIdsPerSearch: 10 });
    cache.set('a', { version: '1', ids: ids(6) });
    cache.set('a', { version: '2', ids: ids(6) });
    cache.set('b', { version: '2', ids: ids(4) });
    expect(cache.get('a')?.version).toBe('2');
    expect(cache.get('b')?.ids).toHaveLength(4);
  });

  it('does not keep a search with more matches than one search may hold, and forgets its older set', () => {
    const cache = createSearchPageCache({ maxIds: 100, maxIdsPerSearch: 5 });
    cache.set('a', { version: '1', ids: ids(3) });
    cache.set('a', { version: '2', ids: ids(6) });
    expect(cache.get('a')).toBeUndefined();
  });

  it('keeps at most its number of searches, even searches that match nothing', () => {
    const cache = createSearchPageCache({ maxIds: 100, maxIdsPerSearch: 10, maxSearches: 3 });
    for (const key of ['a', 'b', 'c', 'd', 'e']) cache.set(key, { version: '1', ids: [] });
    expect(['a', 'b', 'c', 'd', 'e'].map((key) => cache.get(key) !== undefined)).toEqual([
      false,
      false,
      true,
      true,
      true,
    ]);
  });

  it('reads an ORDER BY as its terms, commas inside parentheses included, and refuses a term without a direction', () => {
    expect(orderTerms(`lower(competitor_name) DESC NULLS LAST, coalesce(a, 'x') asc, position DESC`)).toEqual(
      [
        { expression: 'lower(competitor_name)', descending: true, nulls: 'LAST' },
        { expression: `coalesce(a, 'x')`, descending: false },
        { expression: 'position', descending: true },
      ],
    );
    expect(() => orderTerms('lower(name), id ASC')).toThrow(/direction/);
  });
});
