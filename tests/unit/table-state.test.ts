import { describe, expect, it } from 'vitest';
import { pageWindow } from '#web/components/data-table/pagination.tsx';
import { nextSort, parseTableState, toQueryString } from '#web/components/data-table/table-state.ts';

const sortable = ['rank', 'name', 'threat'];

describe('table state (docs/behaviour.md §1, §3)', () => {
  it('starts empty, page 1, 15 per page', () => {
    expect(parseTableState({}, sortable)).toEqual({ search: '', sort: '', page: 1, perPage: 15 });
  });

  it('toggles: same column asc → desc; desc → asc; another column → asc', () => {
    expect(nextSort('', 'name')).toBe('name:asc');
    expect(nextSort('name:asc', 'name')).toBe('name:desc');
    expect(nextSort('name:desc', 'name')).toBe('name:asc');
    expect(nextSort('name:desc', 'threat')).toBe('threat:asc');
    expect(nextSort('name:asc', 'threat')).toBe('threat:asc');
  });

  it('turns invalid parameters into valid ones instead of an error', () => {
    expect(parseTableState({ sort: 'password:asc', page: '-3', perPage: '7' }, sortable)).toEqual({
      search: '',
      sort: '',
      page: 1,
      perPage: 15,
    });
    expect(parseTableState({ sort: 'name:sideways', page: 'abc', perPage: '1e9' }, sortable)).toMatchObject({
      sort: '',
      page: 1,
      perPage: 15,
    });
    expect(
      parseTableState({ sort: ['name:asc', 'rank:desc'], page: '2.5', perPage: '100' }, sortable),
    ).toMatchObject({
      sort: 'rank:desc',
      page: 1,
      perPage: 100,
    });
    expect(parseTableState({ search: `  ${'x'.repeat(500)}  ` }, sortable).search).toHaveLength(200);
  });

  it('always writes all four parameters', () => {
    expect(toQueryString({ search: 'a b', sort: '', page: 2, perPage: 25 })).toBe(
      'search=a+b&sort=&page=2&perPage=25',
    );
  });

  it('shows first, last and a window of pages with gaps', () => {
    expect(pageWindow(1, 1)).toEqual([1]);
    expect(pageWindow(5, 10)).toEqual([1, null, 3, 4, 5, 6, 7, null, 10]);
    expect(pageWindow(1, 4)).toEqual([1, 2, 3, 4]);
  });
});
