import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CompetitorEvent } from '#events/competitor/events.ts';
import { UpdateCompetitorNote } from '#events/competitor/commands.ts';
import { competitorDecider } from '#services/competitor/competitor.ts';
import { exampleCompetitorFields, given, recorded, testMetadata } from '#tests/support/given-when-then.ts';

const id = randomUUID();
const fields = exampleCompetitorFields;
const added: CompetitorEvent = { type: 'CompetitorAdded', data: { ...fields, competitorId: id } };
const note = (value: string, noteVersion: number): CompetitorEvent => ({
  type: 'CompetitorNoteUpdated',
  data: { competitorId: id, column: 'pricing', value, noteVersion },
});

describe('competitor decider', () => {
  it('adds a new competitor in a known segment', () => {
    const decision = given(competitorDecider, []).when({
      type: 'AddCompetitor',
      payload: { ...fields, competitorId: id },
      knownSegments: ['smb'],
    });
    expect(decision).toEqual({ events: [added] });
  });

  it('rejects an unknown segment with a field message', () => {
    const decision = given(competitorDecider, []).when({
      type: 'AddCompetitor',
      payload: { ...fields, competitorId: id },
      knownSegments: ['enterprise'],
    });
    expect(decision).toMatchObject({
      status: 'rejected',
      code: 'validation',
      fields: { segmentId: expect.any(String) },
    });
  });

  it('rejects adding the same competitor twice', () => {
    const decision = given(competitorDecider, [added]).when({
      type: 'AddCompetitor',
      payload: { ...fields, competitorId: id },
      knownSegments: ['smb'],
    });
    expect(decision).toMatchObject({ status: 'rejected', code: 'conflict' });
  });

  it('updates changed fields and does nothing for an identical update', () => {
    const { when } = given(competitorDecider, [added]);
    expect(
      when({ type: 'UpdateCompetitor', payload: { ...fields, competitorId: id, threat: 'high' } }),
    ).toEqual({
      events: [
        {
          type: 'CompetitorUpdated',
          data: {
            name: 'Acme',
            website: fields.website,
            headquarters: null,
            threat: 'high',
            competitorId: id,
          },
        },
      ],
    });
    expect(when({ type: 'UpdateCompetitor', payload: { ...fields, competitorId: id } })).toEqual({
      events: [],
    });
  });

  it('never writes the segment: a segment change is a board move, so a stale form cannot undo one', () => {
    const { when } = given(competitorDecider, [added]);
    const segmentOnly = when({
      type: 'UpdateCompetitor',
      payload: { ...fields, segmentId: 'enterprise', baseSegmentId: 'smb', competitorId: id },
    });
    expect(segmentOnly).toEqual({ events: [] });
    const renamed = when({
      type: 'UpdateCompetitor',
      payload: { ...fields, name: 'Acme 2', segmentId: 'smb', baseSegmentId: 'smb', competitorId: id },
    });
    expect(renamed).toMatchObject({ events: [{ type: 'CompetitorUpdated' }] });
    expect('events' in renamed && renamed.events[0]?.data).not.toHaveProperty('segmentId');
  });

  it('a version 1 update (which carried the segment) still sets it; a later one keeps it', () => {
    const v1: CompetitorEvent = {
      type: 'CompetitorUpdated',
      data: { ...fields, segmentId: 'enterprise', competitorId: id },
    };
    const v2: CompetitorEvent = {
      type: 'CompetitorUpdated',
      data: { name: 'Acme 2', website: null, threat: 'low', headquarters: null, competitorId: id },
    };
    const state = recorded([added, v1, v2]).reduce(
      (s, e) => competitorDecider.evolve(s, e),
      competitorDecider.initialState(),
    );
    expect(state).toMatchObject({ fields: { name: 'Acme 2', segmentId: 'enterprise' } });
  });

  it('rejects an update from a form opened before its fields changed', () => {
    const edited: CompetitorEvent = {
      type: 'CompetitorUpdated',
      data: { name: 'Acme 2', website: null, threat: 'high', headquarters: null, competitorId: id },
    };
    const decision = given(competitorDecider, [added, note('x', 1), edited]).when({
      type: 'UpdateCompetitor',
      payload: { ...fields, competitorId: id, threat: 'low', expectedVersion: 2 },
    });
    expect(decision).toMatchObject({ status: 'rejected', code: 'conflict' });
  });

  it('saves a form opened before a note changed: notes are not among the fields it shows', () => {
    const decision = given(competitorDecider, [added, note('x', 1), note('y', 2)]).when({
      type: 'UpdateCompetitor',
      payload: { ...fields, competitorId: id, threat: 'low', expectedVersion: 1 },
    });
    expect(decision).toMatchObject({ events: [{ type: 'CompetitorUpdated', data: { threat: 'low' } }] });
  });

  it('rejects a form version the competitor never had', () => {
    const decision = given(competitorDecider, [added]).when({
      type: 'UpdateCompetitor',
      payload: { ...fields, competitorId: id, threat: 'low', expectedVersion: 2 },
    });
    expect(decision).toMatchObject({ status: 'rejected', code: 'conflict' });
  });

  describe('notes', () => {
    const update = (value: string, expectedNoteVersion?: number) =>
      ({
        type: 'UpdateCompetitorNote',
        payload: { competitorId: id, column: 'pricing', value, expectedNoteVersion },
      }) as const;

    it('records a valid note with the next note version', () => {
      expect(given(competitorDecider, [added, note('old', 1)]).when(update('new', 1))).toEqual({
        events: [note('new', 2)],
      });
    });

    it('appends nothing when the text is unchanged', () => {
      expect(given(competitorDecider, [added, note('same', 1)]).when(update('same'))).toEqual({ events: [] });
    });

    it('rejects a stale note version, saying who changed it, when, and their text', () => {
      const history = recorded(
        [added, note('theirs', 1)],
        testMetadata({ actor: { id: 'u2', name: 'Grace' } }),
      );
      const decision = given(competitorDecider, history).when(update('mine', 0));
      expect(decision).toMatchObject({
        status: 'rejected',
        code: 'conflict',
        details: {
          currentValue: 'theirs',
          currentVersion: 1,
          changedBy: 'Grace',
          changedAt: '2026-11-01T10:00:00.000Z',
        },
      });
      expect((decision as { message: string }).message).toContain('Grace');
    });

    it('says "you" when the sender saved the newer version themselves (another tab), and names others', () => {
      const history = recorded(
        [added, note('mine elsewhere', 1)],
        testMetadata({ actor: { id: 'u2', name: 'Grace' } }),
      );
      const stale = (senderId: string) =>
        given(competitorDecider, history).when({ ...update('mine here', 0), senderId }) as {
          message: string;
          details: Record<string, unknown>;
        };
      expect(stale('u2').message).toBe(
        'You changed this note at 2026-11-01 10:00 UTC in another tab or window, after you opened it here.',
      );
      expect(stale('u2').details).toMatchObject({ changedBy: 'Grace', changedByYou: true });
      expect(stale('u3').message).toBe(
        'Grace changed this note at 2026-11-01 10:00 UTC, after you opened it.',
      );
      expect(stale('u3').details).toMatchObject({ changedByYou: false });
    });

    it('rejects notes on a deleted competitor and on one that never existed', () => {
      const deleted: CompetitorEvent = {
        type: 'CompetitorDeleted',
        data: { competitorId: id, name: 'Acme' },
      };
      expect(given(competitorDecider, [added, deleted]).when(update('x'))).toMatchObject({
        code: 'not_found',
        message: 'This competitor was deleted.',
      });
      expect(given(competitorDecider, []).when(update('x'))).toMatchObject({ code: 'not_found' });
    });

    it('validates empty, whitespace-only, too long and unknown-column values at the command schema', () => {
      const parse = (payload: object) =>
        UpdateCompetitorNote.safeParse({ type: 'UpdateCompetitorNote', payload });
      const base = { competitorId: id, column: 'pricing' };
      expect(parse({ ...base, value: 'ok' }).success).toBe(true);
      expect(parse({ ...base, value: '' }).error?.issues[0]?.message).toBe('Value is required!');
      expect(parse({ ...base, value: '  \n\t ' }).error?.issues[0]?.message).toBe('Value is required!');
      expect(parse({ ...base, value: 'x'.repeat(10_001) }).error?.issues[0]?.message).toContain('10,000');
      expect(parse({ ...base, value: 'x'.repeat(10_000) }).success).toBe(true);
      expect(parse({ ...base, column: 'secrets', value: 'x' }).success).toBe(false);
    });
  });

  it('deletes once; deleting again appends nothing', () => {
    const deleted: CompetitorEvent = { type: 'CompetitorDeleted', data: { competitorId: id, name: 'Acme' } };
    expect(
      given(competitorDecider, [added]).when({ type: 'DeleteCompetitor', payload: { competitorId: id } }),
    ).toEqual({
      events: [deleted],
    });
    expect(
      given(competitorDecider, [added, deleted]).when({
        type: 'DeleteCompetitor',
        payload: { competitorId: id },
      }),
    ).toEqual({
      events: [],
    });
  });
});
