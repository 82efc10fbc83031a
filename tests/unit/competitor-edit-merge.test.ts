import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CompetitorEvent } from '#events/competitor/events.ts';
import type { Recorded } from '#events/envelope.ts';
import { competitorDecider } from '#services/competitor/competitor.ts';
import { mergeEdit, type EditedFields, type FieldsChange } from '#services/competitor/edit-merge.ts';
import { exampleCompetitorFields, given, recorded, testMetadata } from '#tests/support/given-when-then.ts';
import { noteConflictMessage } from '#web/components/note-conflict.ts';
import { editConflictForm } from '#web/pages/competitors/edit-conflict.ts';

const id = randomUUID();
const { segmentId: _segment, ...example } = exampleCompetitorFields;
const base: EditedFields = example;
const ada = { id: 'u-ada', name: 'Ada' };
const grace = { id: 'u-grace', name: 'Grace' };
const change = (version: number, fields: Partial<EditedFields>, by = ada): FieldsChange => ({
  version,
  fields: { ...base, ...fields },
  by,
  at: `2026-11-01T1${version}:00:00.000Z`,
});

describe('three-way merge of an edit form (pure)', () => {
  const history = [change(1, {}), change(3, { website: 'https://acme.io', threat: 'high' }, grace)];

  it('takes theirs where only they changed, keeps mine where only I did', () => {
    expect(mergeEdit(history, 1, { ...base, name: 'Acme Corp' })).toEqual({
      status: 'merged',
      fields: { ...base, name: 'Acme Corp', website: 'https://acme.io', threat: 'high' },
    });
  });

  it('is no conflict when both wrote the same value', () => {
    expect(mergeEdit(history, 1, { ...base, threat: 'high' })).toMatchObject({ status: 'merged' });
  });

  it('marks a field both changed differently, with who wrote theirs and when; the rest merged', () => {
    expect(mergeEdit(history, 1, { ...base, name: 'Acme Corp', threat: 'low' })).toEqual({
      status: 'conflict',
      fields: { ...base, name: 'Acme Corp', website: 'https://acme.io', threat: 'low' },
      conflicts: [{ field: 'threat', theirs: 'high', by: grace, at: '2026-11-01T13:00:00.000Z' }],
    });
  });

  it('bases the merge on the fields as they stood at the form version (a note version between counts)', () => {
    // Opened at version 2 (a note): its base is version 1's fields, so nothing of it is a change of mine.
    expect(mergeEdit(history, 2, { ...base })).toMatchObject({
      status: 'merged',
      fields: history[1]!.fields,
    });
    // Opened after Grace's change: my low threat is simply mine.
    expect(mergeEdit(history, 3, { ...history[1]!.fields, threat: 'low' })).toEqual({
      status: 'merged',
      fields: { ...history[1]!.fields, threat: 'low' },
    });
  });

  it('names whoever last changed the conflicting field, not the last editor', () => {
    const later = [...history, change(4, { website: 'https://acme.io', threat: 'high', name: 'Acme 2' })];
    const merge = mergeEdit(later, 1, { ...base, threat: 'low' });
    expect(merge).toMatchObject({ status: 'conflict', conflicts: [{ field: 'threat', by: grace }] });
  });

  it('knows no base before the first version', () => {
    expect(mergeEdit(history, 0, base)).toEqual({ status: 'unknown-version' });
  });
});

describe('competitor decider: an edit from a form opened before another edit', () => {
  const added: CompetitorEvent = {
    type: 'CompetitorAdded',
    data: { ...exampleCompetitorFields, competitorId: id },
  };
  const edit = (fields: Partial<EditedFields>): CompetitorEvent => ({
    type: 'CompetitorUpdated',
    data: { ...base, ...fields, competitorId: id },
  });
  const history: Recorded<CompetitorEvent>[] = [
    ...recorded([added]),
    ...recorded([edit({ website: 'https://acme.io' })], testMetadata({ actor: grace })).map((e) => ({
      ...e,
      streamVersion: 2,
    })),
  ];
  const update = (fields: Partial<EditedFields>, senderId = ada.id) =>
    ({
      type: 'UpdateCompetitor',
      payload: { ...exampleCompetitorFields, ...fields, competitorId: id, expectedVersion: 1 },
      senderId,
    }) as const;

  it('saves mine over theirs where they do not overlap, keeping their website', () => {
    expect(given(competitorDecider, history).when(update({ threat: 'high' }))).toEqual({
      events: [edit({ website: 'https://acme.io', threat: 'high' })],
    });
  });

  it('refuses fields both changed, with the merge, the version to send at, and who wrote theirs', () => {
    const decision = given(competitorDecider, history).when(update({ website: 'https://acme.com' }));
    expect(decision).toMatchObject({
      status: 'rejected',
      code: 'conflict',
      details: {
        currentVersion: 2,
        merged: { ...base, website: 'https://acme.com' },
        conflicts: [{ field: 'website', theirs: 'https://acme.io', by: grace, byYou: false }],
      },
    });
    expect((decision as { message: string }).message).toBe(
      'Grace changed website of this competitor after you opened the form. Keep yours or use theirs, then save again.',
    );
  });

  it('says "you" when the conflicting change was the sender’s own (another tab)', () => {
    const decision = given(competitorDecider, history).when(
      update({ website: 'https://acme.com' }, grace.id),
    );
    expect(decision).toMatchObject({ details: { conflicts: [{ byYou: true }] } });
    expect((decision as { message: string }).message).toMatch(/^You changed website/);
  });
});

describe('conflict messages on the viewer’s clock (web layer)', () => {
  const at = '2026-11-26T04:10:00.000Z';

  it('writes the note conflict time in the viewer’s zone and names who changed it', () => {
    const details = { changedBy: 'Grace', changedByYou: false, changedAt: at };
    expect(noteConflictMessage(details, 'Asia/Tokyo')).toBe(
      'Grace changed this note at 26 Nov 2026, 13:10 GMT+9, after you opened it.',
    );
    expect(noteConflictMessage({ ...details, changedByYou: true }, 'UTC')).toBe(
      'You changed this note at 26 Nov 2026, 04:10 UTC in another tab or window, after you opened it here.',
    );
    expect(noteConflictMessage({ currentVersion: 2 }, 'UTC')).toBeUndefined();
  });

  it('shows the edit form again: the merge, the version advanced, each conflict marked', () => {
    const typed = {
      ...base,
      website: 'https://acme.com',
      headquarters: 'Oslo',
      segmentId: 'smb',
      expectedVersion: '1',
    };
    const form = editConflictForm(
      {
        currentVersion: 5,
        merged: { ...base, name: 'Acme 2', website: 'https://acme.com', headquarters: null },
        conflicts: [
          { field: 'website', theirs: 'https://acme.io', by: grace, byYou: false, at },
          { field: 'headquarters', theirs: null, by: ada, byYou: true, at },
        ],
      },
      { ...typed, website: typed.website ?? '', headquarters: typed.headquarters },
      'Asia/Tokyo',
    );
    expect(form?.values).toMatchObject({ name: 'Acme 2', website: 'https://acme.com', expectedVersion: '5' });
    expect(form?.errors.website).toBe(
      'Grace changed this to “https://acme.io” (26 Nov 2026, 13:10 GMT+9); keep yours or use theirs.',
    );
    expect(form?.errors.headquarters).toBe(
      'You cleared this in another tab or window (26 Nov 2026, 13:10 GMT+9); keep this one or use that.',
    );
    expect(form?.theirs).toEqual({
      website: { value: 'https://acme.io', label: 'Use theirs' },
      headquarters: { value: '', label: 'Use that one' },
    });
    expect(form?.errors._form).toMatch(
      /^You \(in another tab or window\) and Grace changed this competitor after you opened this form\./,
    );
  });
});
