import { describe, expect, it } from 'vitest';
import { listEffectOf } from '#projections/competitor-list/change-effects.ts';
import { affectsPage, type ShownPage } from '#web/realtime/affects-table.ts';

const ON = 'on-page-id';
const OFF = 'off-page-id';
const page = (sort = '', search = ''): ShownPage => ({ sort, search, rowIds: new Set([ON, 'another']) });
const change = (type: string, competitorId: string | null = OFF) => ({
  competitorId,
  effect: listEffectOf(type),
});

describe('affectsPage: does a change heard live alter the page a table shows?', () => {
  it.each(['CompetitorAdded', 'CompetitorDeleted', 'CompetitorRankChanged', 'SomethingNew'])(
    '%s changes the list as a whole: every page, whatever its sort or search',
    (type) => {
      for (const shown of [page(), page('name:asc'), page('updated:desc', 'acme')])
        expect(affectsPage(change(type), shown)).toBe(true);
    },
  );

  it.each(['CompetitorUpdated', 'CompetitorNoteUpdated', 'CompetitorMovedToSegment'])(
    '%s of a row on the page alters it under any sort',
    (type) => {
      for (const sort of ['', 'rank:asc', 'name:desc', 'threat:asc', 'updated:desc'])
        expect(affectsPage(change(type, ON), page(sort))).toBe(true);
    },
  );

  it('a note on a row off the page: only a page sorted by last update, or searching, can change', () => {
    expect(affectsPage(change('CompetitorNoteUpdated'), page())).toBe(false);
    expect(affectsPage(change('CompetitorNoteUpdated'), page('rank:desc'))).toBe(false);
    expect(affectsPage(change('CompetitorNoteUpdated'), page('name:asc'))).toBe(false);
    expect(affectsPage(change('CompetitorNoteUpdated'), page('threat:desc'))).toBe(false);
    expect(affectsPage(change('CompetitorNoteUpdated'), page('segment:asc'))).toBe(false);
    expect(affectsPage(change('CompetitorNoteUpdated'), page('updated:asc'))).toBe(true);
    expect(affectsPage(change('CompetitorNoteUpdated'), page('', 'pricing'))).toBe(true);
  });

  it('an edit off the page can move rows under every sort but rank', () => {
    expect(affectsPage(change('CompetitorUpdated'), page())).toBe(false);
    expect(affectsPage(change('CompetitorUpdated'), page('rank:asc'))).toBe(false);
    for (const sort of ['name:asc', 'segment:desc', 'threat:asc', 'updated:desc'])
      expect(affectsPage(change('CompetitorUpdated'), page(sort))).toBe(true);
  });

  it('a segment move off the page matters to pages sorted by segment or last update', () => {
    expect(affectsPage(change('CompetitorMovedToSegment'), page('name:asc'))).toBe(false);
    expect(affectsPage(change('CompetitorMovedToSegment'), page('segment:asc'))).toBe(true);
    expect(affectsPage(change('CompetitorMovedToSegment'), page('updated:desc'))).toBe(true);
  });

  it('reordering the segments alters no table page; a change without a competitor alters any', () => {
    expect(affectsPage(change('SegmentsReordered', null), page('segment:asc', 'x'))).toBe(false);
    expect(
      affectsPage({ competitorId: null, effect: listEffectOf('CompetitorUpdated') }, page('name:asc')),
    ).toBe(true);
  });
});
