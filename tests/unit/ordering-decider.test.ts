import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CompetitorEvent } from '#events/competitor/events.ts';
import type { Recorded } from '#events/envelope.ts';
import { ReorderRanking, ReorganizeSegments, MAX_ORDERED_ITEMS } from '#events/ordering/commands.ts';
import type { OrderingEvent } from '#events/ordering/events.ts';
import type { SegmentEvent } from '#events/segment/events.ts';
import { orderingStream } from '#events/streams.ts';
import { orderingDecider } from '#services/ordering/ordering.ts';
import { decideSegmentMove } from '#services/ordering/segment-move.ts';
import type { OrderingSourceEvent, OrderingState } from '#services/ordering/ordering-state.ts';
import { testMetadata } from '#tests/support/given-when-then.ts';

const ids = ['a', 'b', 'c', 'd'].map(() => randomUUID());
const [a, b, c, d] = ids as [string, string, string, string];
const names: Record<string, string> = { [a]: 'Acme', [b]: 'Beta', [c]: 'Cobalt', [d]: 'Delta' };

const segment = (segmentId: string, name: string, position: number): SegmentEvent => ({
  type: 'SegmentAdded',
  data: { segmentId, name, position },
});
const competitor = (id: string, segmentId: string): CompetitorEvent => ({
  type: 'CompetitorAdded',
  data: {
    competitorId: id,
    name: names[id] ?? id,
    website: null,
    segmentId,
    threat: 'low',
    headquarters: null,
  },
});

/** Events as the store returns them; ordering events get ordering-stream versions 1, 2, … */
function history(events: OrderingSourceEvent[], actor = 'Ada'): Recorded<OrderingSourceEvent>[] {
  let orderingVersion = 0;
  return events.map((event, i): Recorded<OrderingSourceEvent> => {
    const ordering = ['CompetitorRankChanged', 'CompetitorMovedToSegment', 'SegmentsReordered'].includes(
      event.type,
    );
    return {
      ...event,
      position: i + 1,
      transactionId: String(100 + i),
      stream: ordering ? orderingStream() : `other-${i}`,
      streamVersion: ordering ? ++orderingVersion : 1,
      schemaVersion: 1,
      metadata: testMetadata({ actor: { id: 'u', name: actor } }),
      recordedAt: new Date(),
    };
  });
}

const fold = (events: Recorded<OrderingSourceEvent>[]): OrderingState =>
  events.reduce((s, e) => orderingDecider.evolve(s, e), orderingDecider.initialState());

const base: OrderingSourceEvent[] = [
  segment('enterprise', 'Enterprise', 1),
  segment('smb', 'SMB', 2),
  segment('emerging', 'Emerging', 3),
  competitor(a, 'enterprise'),
  competitor(b, 'enterprise'),
  competitor(c, 'smb'),
  competitor(d, 'smb'),
];

const items = (list: string[]) => list.map((value, i) => ({ order: i + 1, value }));
const rank = (list: string[], expectedVersion = 0) =>
  ({ type: 'ReorderRanking', payload: { items: items(list), expectedVersion } }) as const;
const board = (groups: [string, string[]][], expectedVersion = 0) =>
  ({
    type: 'ReorganizeSegments',
    payload: {
      groups: groups.map(([value, list], i) => ({ order: i + 1, value, items: items(list) })),
      expectedVersion,
    },
  }) as const;

describe('ordering: evolve', () => {
  it('given adds, the ranking is in the order they were added, each in its segment', () => {
    const state = fold(history(base));
    expect(state.ranking).toEqual([a, b, c, d]);
    expect(state.segments).toEqual(['enterprise', 'smb', 'emerging']);
    expect(state.competitors.get(c)?.segmentId).toBe('smb');
    expect(state.version).toBe(0);
  });

  it('CompetitorRankChanged moves one item and bumps the version', () => {
    const state = fold(
      history([
        ...base,
        { type: 'CompetitorRankChanged', data: { competitorId: d, name: 'Delta', from: 4, to: 1 } },
      ]),
    );
    expect(state.ranking).toEqual([d, a, b, c]);
    expect(state.version).toBe(1);
  });

  it('CompetitorMovedToSegment changes the segment, not the rank', () => {
    const state = fold(
      history([
        ...base,
        {
          type: 'CompetitorMovedToSegment',
          data: { competitorId: a, name: 'Acme', fromSegmentId: 'enterprise', toSegmentId: 'emerging' },
        },
      ]),
    );
    expect(state.competitors.get(a)?.segmentId).toBe('emerging');
    expect(state.ranking).toEqual([a, b, c, d]);
  });

  it('an edit after a board move keeps the moved segment (a version 2 update carries none)', () => {
    const state = fold(
      history([
        ...base,
        {
          type: 'CompetitorMovedToSegment',
          data: { competitorId: a, name: 'Acme', fromSegmentId: 'enterprise', toSegmentId: 'emerging' },
        },
        {
          type: 'CompetitorUpdated',
          data: { competitorId: a, name: 'Acme 2', website: null, threat: 'high', headquarters: null },
        },
      ]),
    );
    expect(state.competitors.get(a)).toEqual({ name: 'Acme 2', segmentId: 'emerging' });
  });

  it('SegmentsReordered applies its moves in turn', () => {
    const state = fold(
      history([
        ...base,
        { type: 'SegmentsReordered', data: { moves: [{ segmentId: 'emerging', from: 3, to: 1 }] } },
      ]),
    );
    expect(state.segments).toEqual(['emerging', 'enterprise', 'smb']);
  });

  it('a deleted competitor leaves the ranking; a move of a deleted one is ignored', () => {
    const state = fold(
      history([
        ...base,
        { type: 'CompetitorDeleted', data: { competitorId: b, name: 'Beta' } },
        { type: 'CompetitorRankChanged', data: { competitorId: b, name: 'Beta', from: 2, to: 1 } },
      ]),
    );
    expect(state.ranking).toEqual([a, c, d]);
  });

  it('evolve does not change the state it was given', () => {
    const before = fold(history(base));
    const [move] = history([
      { type: 'CompetitorRankChanged', data: { competitorId: d, name: 'Delta', from: 4, to: 1 } },
    ]);
    orderingDecider.evolve(before, move!);
    expect(before.ranking).toEqual([a, b, c, d]);
  });
});

describe('ordering: decide the ranking', () => {
  const state = () => fold(history(base));

  it('one drag is one move, from and to', () => {
    expect(orderingDecider.decide(rank([c, a, b, d]), state())).toEqual({
      events: [{ type: 'CompetitorRankChanged', data: { competitorId: c, name: 'Cobalt', from: 3, to: 1 } }],
    });
  });

  it('a drop that changes nothing records nothing', () => {
    expect(orderingDecider.decide(rank([a, b, c, d]), state())).toEqual({ events: [] });
  });

  it('items may arrive in any order: `order` decides', () => {
    const shuffled = [
      { order: 2, value: a },
      { order: 1, value: b },
      { order: 4, value: d },
      { order: 3, value: c },
    ];
    const decision = orderingDecider.decide(
      { type: 'ReorderRanking', payload: { items: shuffled, expectedVersion: 0 } },
      state(),
    );
    expect(decision).toMatchObject({ events: [{ data: { competitorId: b, from: 2, to: 1 } }] });
  });

  it.each([
    ['a duplicated id', [a, a, c, d], /“Acme” appears more than once/],
    ['an unknown id', [a, b, c, randomUUID()], /is not in the ranking/],
    ['a missing id', [a, b, c], /missing a competitor: “Delta”/],
    ['an empty list', [], /missing 4 competitors/],
  ])('rejects %s with a readable message', (_, list, message) => {
    expect(orderingDecider.decide(rank(list), state())).toMatchObject({
      status: 'rejected',
      code: 'validation',
      message: expect.stringMatching(message),
    });
  });

  it.each([
    ['a gap', [1, 2, 4, 5], /order 3 is missing/],
    ['a repeat', [1, 2, 2, 3], /order 2 appears more than once/],
    ['a start above 1', [2, 3, 4, 5], /order 1 is missing/],
  ])('rejects non-contiguous orders: %s', (_, orders, message) => {
    const list = [a, b, c, d].map((value, i) => ({ order: orders[i] as number, value }));
    expect(
      orderingDecider.decide(
        { type: 'ReorderRanking', payload: { items: list, expectedVersion: 0 } },
        state(),
      ),
    ).toMatchObject({ status: 'rejected', code: 'validation', message: expect.stringMatching(message) });
  });

  it('rejects a drop that does not say which version it was based on', () => {
    const { expectedVersion: _, ...payload } = rank([a, b, c, d]).payload;
    expect(orderingDecider.decide({ type: 'ReorderRanking', payload }, state())).toMatchObject({
      status: 'rejected',
      code: 'validation',
      message: expect.stringMatching(/version of the order/),
    });
  });

  it('rejects a stale version, saying who moved what', () => {
    const moved = fold(
      history(
        [
          ...base,
          { type: 'CompetitorRankChanged', data: { competitorId: d, name: 'Delta', from: 4, to: 1 } },
        ],
        'Grace',
      ),
    );
    expect(orderingDecider.decide(rank([b, a, c, d], 0), moved)).toMatchObject({
      status: 'rejected',
      code: 'conflict',
      message: expect.stringMatching(/^Grace moved Delta from #4 to #1 after you loaded this list/),
      details: { currentVersion: 1 },
    });
  });

  it('the moves turn any permutation into exactly the dropped order', () => {
    for (let round = 0; round < 30; round++) {
      const list = Array.from({ length: 40 }, () => randomUUID());
      const events = history(list.map((id) => competitor(id, 'smb')));
      const start = fold(events);
      const target = [...list].sort(() => Math.random() - 0.5);
      const decision = orderingDecider.decide(rank(target), start);
      if (!('events' in decision)) throw new Error(decision.message);
      const after = fold([
        ...events,
        ...history(decision.events).map((e, i) => ({ ...e, position: 1000 + i })),
      ]);
      expect(after.ranking).toEqual(target);
    }
  });
});

describe('ordering: decide the board', () => {
  const state = () => fold(history(base));
  const current: [string, string[]][] = [
    ['enterprise', [a, b]],
    ['smb', [c, d]],
    ['emerging', []],
  ];

  it('the unchanged board records nothing', () => {
    expect(orderingDecider.decide(board(current), state())).toEqual({ events: [] });
  });

  it('moving an item within a segment reorders the ranking', () => {
    expect(
      orderingDecider.decide(
        board([
          ['enterprise', [b, a]],
          ['smb', [c, d]],
          ['emerging', []],
        ]),
        state(),
      ),
    ).toEqual({
      events: [{ type: 'CompetitorRankChanged', data: { competitorId: b, name: 'Beta', from: 2, to: 1 } }],
    });
  });

  it('moving an item to another segment records the move and keeps its rank where it fits', () => {
    expect(
      orderingDecider.decide(
        board([
          ['enterprise', [a]],
          ['smb', [c, d]],
          ['emerging', [b]],
        ]),
        state(),
      ),
    ).toEqual({
      events: [
        {
          type: 'CompetitorMovedToSegment',
          data: { competitorId: b, name: 'Beta', fromSegmentId: 'enterprise', toSegmentId: 'emerging' },
        },
      ],
    });
  });

  it('moving a segment records SegmentsReordered with the move', () => {
    expect(
      orderingDecider.decide(
        board([
          ['emerging', []],
          ['enterprise', [a, b]],
          ['smb', [c, d]],
        ]),
        state(),
      ),
    ).toEqual({
      events: [{ type: 'SegmentsReordered', data: { moves: [{ segmentId: 'emerging', from: 3, to: 1 }] } }],
    });
  });

  it.each([
    [
      'a missing segment',
      [
        ['enterprise', [a, b]],
        ['smb', [c, d]],
      ],
      /missing the segment Emerging/,
    ],
    [
      'a duplicated segment',
      [
        ['enterprise', [a, b]],
        ['enterprise', [c, d]],
        ['emerging', []],
      ],
      /Enterprise appears more than once/,
    ],
    [
      'an unknown segment',
      [
        ['enterprise', [a, b]],
        ['smb', [c, d]],
        ['nowhere', []],
      ],
      /no segment “nowhere”/,
    ],
    [
      'a competitor in two segments',
      [
        ['enterprise', [a, b]],
        ['smb', [c, d]],
        ['emerging', [a]],
      ],
      /“Acme” appears more than once/,
    ],
    [
      'a missing competitor',
      [
        ['enterprise', [a, b]],
        ['smb', [c]],
        ['emerging', []],
      ],
      /missing a competitor: “Delta”/,
    ],
    [
      'an unknown competitor',
      [
        ['enterprise', [a, b]],
        ['smb', [c, d, randomUUID()]],
        ['emerging', []],
      ],
      /is not in the ranking/,
    ],
  ] as [string, [string, string[]][], RegExp][])('rejects %s', (_, groups, message) => {
    expect(orderingDecider.decide(board(groups), state())).toMatchObject({
      status: 'rejected',
      code: 'validation',
      message: expect.stringMatching(message),
    });
  });

  it('rejects non-contiguous item orders inside a segment, naming it', () => {
    const command = board(current);
    const groups = command.payload.groups.map((g) =>
      g.value === 'smb'
        ? {
            ...g,
            items: [
              { order: 1, value: c },
              { order: 3, value: d },
            ],
          }
        : g,
    );
    expect(
      orderingDecider.decide({ ...command, payload: { ...command.payload, groups } }, state()),
    ).toMatchObject({
      status: 'rejected',
      message: expect.stringMatching(/In the segment SMB, order 2 is missing/),
    });
  });

  it('rejects a stale version', () => {
    const moved = fold(
      history([
        ...base,
        { type: 'SegmentsReordered', data: { moves: [{ segmentId: 'smb', from: 2, to: 1 }] } },
      ]),
    );
    expect(orderingDecider.decide(board(current, 0), moved)).toMatchObject({
      status: 'rejected',
      code: 'conflict',
      message: expect.stringMatching(/Ada moved the segment SMB from 2 to 1/),
    });
  });

  it('every segment shows the dropped relative order after the moves (random boards)', () => {
    for (let round = 0; round < 30; round++) {
      const list = Array.from({ length: 30 }, () => randomUUID());
      const segs = ['enterprise', 'smb', 'emerging'];
      const events = history([
        ...base.slice(0, 3),
        ...list.map((id, i) => competitor(id, segs[i % 3] as string)),
      ]);
      const start = fold(events);
      const shuffledSegs = [...segs].sort(() => Math.random() - 0.5);
      const groups = shuffledSegs.map((s) => [s, [] as string[]] as [string, string[]]);
      for (const id of [...list].sort(() => Math.random() - 0.5))
        groups[Math.floor(Math.random() * 3)]![1].push(id);
      const decision = orderingDecider.decide(board(groups), start);
      if (!('events' in decision)) throw new Error(decision.message);
      const after = fold([...events, ...history(decision.events)]);
      expect(after.segments).toEqual(shuffledSegs);
      for (const [seg, members] of groups) {
        expect(after.ranking.filter((id) => after.competitors.get(id)?.segmentId === seg)).toEqual(members);
      }
    }
  });
});

describe('ordering: payload schemas (wrong types, oversized)', () => {
  const wrap = (items: unknown) => ({ type: 'ReorderRanking', payload: { items, expectedVersion: 0 } });
  it.each([
    ['a string order', [{ order: '1', value: a }]],
    ['a fractional order', [{ order: 1.5, value: a }]],
    ['order 0', [{ order: 0, value: a }]],
    ['a value that is not an id', [{ order: 1, value: 42 }]],
    ['an extra key', [{ order: 1, value: a, name: 'x' }]],
    ['not a list', { order: 1, value: a }],
  ])('rejects %s', (_, list) => {
    expect(ReorderRanking.safeParse(wrap(list)).success).toBe(false);
  });

  it(`rejects more than ${MAX_ORDERED_ITEMS} items`, () => {
    const list = Array.from({ length: MAX_ORDERED_ITEMS + 1 }, (_, i) => ({ order: i + 1, value: a }));
    const result = ReorderRanking.safeParse(wrap(list));
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toMatch(/at most 20,000/);
  });

  it('rejects a board group without items', () => {
    const result = ReorganizeSegments.safeParse({
      type: 'ReorganizeSegments',
      payload: { groups: [{ order: 1, value: 'smb' }], expectedVersion: 0 },
    });
    expect(result.success).toBe(false);
  });
});

// Types only: the events decide returns are ordering events.
export type _Check = OrderingEvent;

describe('ordering: an edit form changes the segment', () => {
  const state = () => fold(history(base));

  it('a changed segment field is one move on the board, with the names', () => {
    expect(decideSegmentMove({ competitorId: a, toSegmentId: 'smb' }, state())).toEqual({
      events: [
        {
          type: 'CompetitorMovedToSegment',
          data: { competitorId: a, name: 'Acme', fromSegmentId: 'enterprise', toSegmentId: 'smb' },
        },
      ],
    });
  });

  it('moving it where it already is records nothing', () => {
    expect(decideSegmentMove({ competitorId: a, toSegmentId: 'enterprise' }, state())).toEqual({
      events: [],
    });
  });

  it('refuses an unknown segment with a field message, and a deleted competitor', () => {
    expect(decideSegmentMove({ competitorId: a, toSegmentId: 'nowhere' }, state())).toMatchObject({
      status: 'rejected',
      code: 'validation',
      fields: { segmentId: 'Choose one of the segments on the board.' },
    });
    expect(decideSegmentMove({ competitorId: randomUUID(), toSegmentId: 'smb' }, state())).toMatchObject({
      status: 'rejected',
      code: 'not_found',
    });
  });
});
