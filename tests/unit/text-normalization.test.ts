import { describe, expect, it } from 'vitest';
import { eventRegistry } from '#events/all-events.ts';
import { competitorFields, noteValue } from '#events/competitor/fields.ts';
import { composeStrings } from '#events/text.ts';
import { displayName } from '#events/user/fields.ts';
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
