import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { eventRegistry } from '#events/all-events.ts';
import { competitorFields, noteValue } from '#events/competitor/fields.ts';
import { composeStrings } from '#events/text.ts';
import { displayName } from '#events/user/fields.ts';
import { containsPattern } from '#projections/search-pages.ts';
import { userSearchText } from '#projections/user-list/user-list.queries.ts';
import { parseTableState } from '#web/components/data-table/table-state.ts';

/** Decision 0024: text is composed (NFC) at every edge, and events written before are read composed. */
const decomposed = 'Cafe\u0301 Zu\u0308rich';
const composed = 'Café Zürich';

describe('text is composed (NFC) at the edge', () => {
  it('composes names, notes, display names and searches typed with combining accents', () => {
    expect(decomposed).not.toBe(composed);
    const fields = competitorFields.parse({
      name: decomposed,
      website: null,
      segmentId: 'smb',
      threat: 'low',
      headquarters: decomposed,
    });
    expect([fields.name, fields.headquarters]).toEqual([composed, composed]);
    expect(noteValue.parse(decomposed)).toBe(composed);
    expect(displayName.parse(decomposed)).toBe(composed);
    expect(parseTableState({ search: ` ${decomposed} ` }, []).search).toBe(composed);
  });

  it('reads events stored with decomposed text as composed text, at the current and older schema versions', () => {
    const competitorId = '6f1d7a8e-4b0c-4c55-9b7a-0d1f0e2a3b4c';
    const added = {
      competitorId,
      name: decomposed,
      website: null,
      segmentId: 'smb',
      threat: 'low',
      headquarters: null,
    };
    expect(eventRegistry.upcast('CompetitorAdded', 1, added)).toEqual({ ...added, name: composed });
    // Version 1 of CompetitorUpdated is lifted and validated; version 2 is read as stored.
    for (const version of [1, 2])
      expect(eventRegistry.upcast('CompetitorUpdated', version, added)).toMatchObject({ name: composed });
    const note = { competitorId, column: 'pricing', value: `${decomposed}\n${decomposed}`, noteVersion: 1 };
    expect(eventRegistry.upcast('CompetitorNoteUpdated', 1, note)).toEqual({
      ...note,
      value: `${composed}\n${composed}`,
    });
  });

  it('returns data without decomposed text as it is, and copies only what changes', () => {
    const untouched = { a: 'plain', b: ['é', 1, null], c: { d: 'ünïcödé, composed', e: true } };
    expect(composeStrings(untouched)).toBe(untouched);
    const mixed = { keep: { x: 'y' }, change: [decomposed] };
    const result = composeStrings(mixed) as typeof mixed;
    expect(result).toEqual({ keep: { x: 'y' }, change: [composed] });
    expect(result.keep).toBe(mixed.keep);
    expect(mixed.change[0]).toBe(decomposed);
  });
});

describe('a search is folded as the searched text is (migration 030)', () => {
  it('reads compatibility letters as their plain form and leaves invisible characters out', () => {
    expect(containsPattern('Ⓐcme ﬁ\u00a0Ｆ')).toBe('%Acme fi F%');
    expect(containsPattern('Zero\u200bWidth\u00ad❤\ufe0f')).toBe('%ZeroWidth❤%');
  });

  it('keeps %, _ and \\ literal, also when NFKC makes them out of fullwidth forms', () => {
    expect(containsPattern('100% a_b \\')).toBe('%100\\% a\\_b \\\\%');
    expect(containsPattern('100％ a＿b ＼')).toBe('%100\\% a\\_b \\\\%');
  });

  it('the users search is the expression of their trigram index, and one function folds every searched text', () => {
    const migration = readFileSync(
      new URL('../../infra/migrations/030_search_text_folding.sql', import.meta.url),
      'utf8',
    ).replace(/\s+/g, ' ');
    expect(migration).toContain(userSearchText.replace(/\s+/g, ' '));
    const lists = migration.match(/'\[\\u00AD[^\]]*\]'/g) ?? [];
    expect(lists).toHaveLength(1);
    expect(migration.match(/search_fold\(/g)).toHaveLength(4);
    // The list is Unicode's Default_Ignorable_Code_Point, as the search term and the name key use it.
    const inList = new RegExp((lists[0] ?? '').slice(1, -1).replace(/\\U000([0-9A-F]{5})/g, '\\u{$1}'), 'u');
    for (let code = 0; code <= 0x10ffff; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const character = String.fromCodePoint(code);
      if (inList.test(character) !== /\p{Default_Ignorable_Code_Point}/u.test(character))
        expect.fail(`U+${code.toString(16)} is listed differently`);
    }
  });
});
