import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CompetitorNameEvent } from '#events/competitor/events.ts';
import type { UserEvent } from '#events/user/events.ts';
import { competitorNameStream } from '#events/streams.ts';
import { competitorNameDecider } from '#services/competitor/competitor-name.ts';
import { usersDecider } from '#services/user/users.ts';
import { given } from '#tests/support/given-when-then.ts';

describe('competitor names', () => {
  const a = randomUUID();
  const b = randomUUID();
  const claimed: CompetitorNameEvent = {
    type: 'CompetitorNameClaimed',
    data: { name: 'Acme', competitorId: a },
  };

  it('folds case and surrounding space into one stream per name', () => {
    expect(competitorNameStream('  ACME ')).toBe(competitorNameStream('acme'));
    expect(competitorNameStream('Acme')).not.toBe(competitorNameStream('Acme Inc'));
  });

  it('folds case beyond ASCII as one rule for every language (decision 0024)', () => {
    const same = (a: string, b: string) =>
      expect(competitorNameStream(a), `${a} = ${b}`).toBe(competitorNameStream(b));
    const differ = (a: string, b: string) =>
      expect(competitorNameStream(a), `${a} ≠ ${b}`).not.toBe(competitorNameStream(b));
    same('ÄRZTE', 'ärzte');
    same('Cafe\u0301', 'CAFÉ');
    // Greek sigma: capital Σ, final ς and medial σ are one letter, wherever a name puts them.
    same('ΟΔΟΣ', 'οδοσ');
    same('ΟΔΟΣ', 'Οδος');
    same('ΟΔΟΣ ΑΕ', 'οδοσ αε');
    same('ΣΑΣ', 'ςας');
    // The capital sharp s is the sharp s; "ss" is a spelling of its own, as the search sees it.
    same('STRAẞE', 'Straße');
    differ('Straße', 'STRASSE');
    // Turkish dotted and dotless i are letters of their own (language-neutral folding).
    differ('İstanbul', 'Istanbul');
    differ('ıstanbul', 'Istanbul');
    same('İSTANBUL', 'i̇stanbul');
  });

  it('lets the first claim win and rejects another competitor with a clear message', () => {
    expect(
      given(competitorNameDecider, []).when({ type: 'ClaimCompetitorName', name: 'Acme', competitorId: a }),
    ).toEqual({
      events: [claimed],
    });
    const rejected = given(competitorNameDecider, [claimed]).when({
      type: 'ClaimCompetitorName',
      name: 'acme',
      competitorId: b,
    });
    expect(rejected).toMatchObject({
      status: 'rejected',
      code: 'conflict',
      fields: { name: 'A competitor named “acme” already exists.' },
    });
  });

  it('is idempotent for the holder and frees the name on release', () => {
    expect(
      given(competitorNameDecider, [claimed]).when({
        type: 'ClaimCompetitorName',
        name: 'Acme',
        competitorId: a,
      }),
    ).toEqual({
      events: [],
    });
    const released: CompetitorNameEvent = {
      type: 'CompetitorNameReleased',
      data: { name: 'Acme', competitorId: a },
    };
    expect(
      given(competitorNameDecider, [claimed]).when({
        type: 'ReleaseCompetitorName',
        name: 'Acme',
        competitorId: b,
      }),
    ).toEqual({
      events: [],
    });
    expect(
      given(competitorNameDecider, [claimed, released]).when({
        type: 'ClaimCompetitorName',
        name: 'Acme',
        competitorId: b,
      }),
    ).toEqual({
      events: [{ type: 'CompetitorNameClaimed', data: { name: 'Acme', competitorId: b } }],
    });
  });
});

describe('users', () => {
  const admin = randomUUID();
  const editor = randomUUID();
  const history: UserEvent[] = [
    { type: 'UserAdded', data: { userId: admin, email: 'a@x.test', displayName: 'A', role: 'admin' } },
    { type: 'UserAdded', data: { userId: editor, email: 'e@x.test', displayName: 'E', role: 'editor' } },
  ];

  it('rejects a second user with the same email', () => {
    const decision = given(usersDecider, history).when({
      type: 'AddUser',
      payload: { userId: randomUUID(), email: 'e@x.test', displayName: 'Other', role: 'viewer' },
    });
    expect(decision).toMatchObject({
      code: 'conflict',
      fields: { email: expect.stringContaining('already exists') },
    });
  });

  it('never leaves the workspace without an active admin', () => {
    const { when } = given(usersDecider, history);
    expect(when({ type: 'ChangeUserRole', payload: { userId: admin, role: 'viewer' } })).toMatchObject({
      code: 'conflict',
    });
    expect(when({ type: 'DisableUser', payload: { userId: admin } })).toMatchObject({ code: 'conflict' });
    expect(when({ type: 'ChangeUserRole', payload: { userId: editor, role: 'admin' } })).toEqual({
      events: [{ type: 'UserRoleChanged', data: { userId: editor, role: 'admin', previousRole: 'editor' } }],
    });
  });

  it('disables and enables idempotently', () => {
    const disabled: UserEvent = { type: 'UserDisabled', data: { userId: editor } };
    expect(given(usersDecider, history).when({ type: 'DisableUser', payload: { userId: editor } })).toEqual({
      events: [disabled],
    });
    expect(
      given(usersDecider, [...history, disabled]).when({ type: 'DisableUser', payload: { userId: editor } }),
    ).toEqual({ events: [] });
    expect(
      given(usersDecider, [...history, disabled]).when({ type: 'EnableUser', payload: { userId: editor } }),
    ).toEqual({
      events: [{ type: 'UserEnabled', data: { userId: editor } }],
    });
  });

  it('lets a user change their own password only, every time it is asked (each change is listed)', () => {
    const { when } = given(usersDecider, history);
    const own = { type: 'ChangeOwnPassword', payload: { userId: editor } } as const;
    expect(when({ ...own, senderId: editor })).toEqual({
      events: [{ type: 'UserPasswordChanged', data: { userId: editor } }],
    });
    expect(when({ ...own, senderId: admin })).toMatchObject({
      code: 'forbidden',
      message: 'You can only change your own password.',
    });
    expect(when(own)).toMatchObject({ code: 'forbidden' });
    const nobody = randomUUID();
    expect(when({ type: 'ChangeOwnPassword', payload: { userId: nobody }, senderId: nobody })).toMatchObject({
      code: 'not_found',
    });
  });
});
