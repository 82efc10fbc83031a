import { describe, expect, it } from 'vitest';
import { pageWindow } from '#web/components/pagination.tsx';
import {
  nextSort,
  parseTableState,
  shownSort,
  sortedBy,
  toQueryString,
} from '#web/components/data-table/table-state.ts';

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

  it('a sort change starts from page 1 and keeps the search and page size', () => {
    const deep = { search: 'works', sort: 'rank:asc', page: 7, perPage: 25 };
    expect(sortedBy(deep, 'name')).toEqual({ search: 'works', sort: 'name:asc', page: 1, perPage: 25 });
    expect(sortedBy({ ...deep, sort: 'name:asc' }, 'name')).toEqual({ ...deep, sort: 'name:desc', page: 1 });
  });

  it("without a sort, the header shows the table's default order; choosing any column first sorts it ascending", () => {
    const natural = { search: '', sort: '', page: 3, perPage: 15 };
    // The seed: "Choosing a column sorts it ascending … Any other case sets ascending", the default's too.
    expect(sortedBy(natural, 'rank')).toEqual({ ...natural, sort: 'rank:asc', page: 1 });
    expect(sortedBy(natural, 'time')).toEqual({ ...natural, sort: 'time:asc', page: 1 });
    expect(shownSort(natural, 'time:desc')).toBe('time:desc');
    expect(shownSort({ sort: 'name:asc' }, 'time:desc')).toBe('name:asc');
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

  it('cuts a long search at a whole character, never inside an emoji', () => {
    const emoji = '\u{1F600}';
    const cut = parseTableState({ search: `${'a'.repeat(199)}${emoji}` }, sortable).search;
    expect(cut).toBe('a'.repeat(199));
    expect(parseTableState({ search: `${'a'.repeat(198)}${emoji}` }, sortable).search).toBe(
      `${'a'.repeat(198)}${emoji}`,
    );
  });

  it('reads a page too large to hold exactly, however it is written, as too large (the last page)', () => {
    for (const page of ['99999999999999999999', '1e30', '1E16', '1e400', '+1e20'])
      expect(parseTableState({ page }, sortable).page, page).toBe(Number.MAX_SAFE_INTEGER);
    for (const page of ['1e2', '100']) expect(parseTableState({ page }, sortable).page, page).toBe(100);
    for (const page of ['-1e30', 'Infinity', '1e', 'e5', '0x10'])
      expect(parseTableState({ page }, sortable).page, page).toBe(1);
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
