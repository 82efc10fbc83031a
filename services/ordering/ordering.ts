import type {
  OrderedGroup,
  OrderedItem,
  OrderingCommand,
  ReorderRankingCommand,
  ReorganizeSegmentsCommand,
} from '#events/ordering/commands.ts';
import type { OrderingEvent } from '#events/ordering/events.ts';
import { assertNever } from '#infra/assert-never.ts';
import { accept, reject, type Decider, type Decision } from '../decider.ts';
import {
  evolveOrdering,
  initialOrderingState,
  type OrderingSourceEvent,
  type OrderingState,
} from './ordering-state.ts';
import { planMoves } from './plan-moves.ts';

type Result<T> = { ok: true; value: T } | { ok: false; message: string };
const fail = (message: string): { ok: false; message: string } => ({ ok: false, message });

/**
 * Pure: a drop becomes the moves that turn the current order into the dropped one. Only a complete,
 * current snapshot is accepted: the version the list was based on, every live competitor (and on the
 * board every segment) exactly once, orders 1..n. A drop that changes nothing records nothing.
 */
export function decideOrdering(command: OrderingCommand, state: OrderingState): Decision<OrderingEvent> {
  const expected = command.payload.expectedVersion;
  if (expected === undefined)
    return invalid('Send the version of the order your list shows (expect), so a stale list is not saved.');
  if (expected !== state.version) return stale(state, expected);
  switch (command.type) {
    case 'ReorderRanking':
      return decideRanking(command, state);
    case 'ReorganizeSegments':
      return decideBoard(command, state);
    default:
      return assertNever(command);
  }
}

function decideRanking(command: ReorderRankingCommand, state: OrderingState): Decision<OrderingEvent> {
  const ids = inOrder(command.payload.items, 'the ranking');
  if (!ids.ok) return invalid(ids.message);
  const complete = checkCompetitors(ids.value, state);
  if (!complete.ok) return invalid(complete.message);
  return accept(...rankEvents(state, [ids.value]));
}

function decideBoard(command: ReorganizeSegmentsCommand, state: OrderingState): Decision<OrderingEvent> {
  const groups = inOrder(command.payload.groups, 'the board');
  if (!groups.ok) return invalid(groups.message);
  const segmentIds = groups.value.map((g) => g.value);
  const segmentsOk = checkSegments(segmentIds, state);
  if (!segmentsOk.ok) return invalid(segmentsOk.message);
  const members: string[][] = [];
  for (const group of groups.value) {
    const ids = inOrder(group.items, `the segment ${state.segmentNames.get(group.value) ?? group.value}`);
    if (!ids.ok) return invalid(ids.message);
    members.push(ids.value);
  }
  const complete = checkCompetitors(members.flat(), state);
  if (!complete.ok) return invalid(complete.message);

  const events: OrderingEvent[] = [];
  const segmentMoves = planMoves(state.segments, [segmentIds]);
  if (segmentMoves.length > 0) {
    events.push({
      type: 'SegmentsReordered',
      data: { moves: segmentMoves.map(({ id, from, to }) => ({ segmentId: id, from, to })) },
    });
  }
  groups.value.forEach((group, g) => {
    for (const id of members[g] ?? []) {
      const competitor = state.competitors.get(id);
      if (!competitor || competitor.segmentId === group.value) continue;
      events.push({
        type: 'CompetitorMovedToSegment',
        data: {
          competitorId: id,
          name: competitor.name,
          fromSegmentId: competitor.segmentId,
          toSegmentId: group.value,
        },
      });
    }
  });
  events.push(...rankEvents(state, members));
  return accept(...events);
}

function rankEvents(state: OrderingState, groups: string[][]): OrderingEvent[] {
  return planMoves(state.ranking, groups).map(({ id, from, to }) => ({
    type: 'CompetitorRankChanged' as const,
    data: { competitorId: id, name: state.competitors.get(id)?.name ?? id, from, to },
  }));
}

/** The values sorted by `order`, if the orders are exactly 1..n. */
function inOrder<T extends OrderedItem | OrderedGroup>(
  entries: readonly T[],
  where: string,
): Result<T extends OrderedGroup ? OrderedGroup[] : string[]> {
  const sorted = [...entries].sort((a, b) => a.order - b.order);
  for (let i = 0; i < sorted.length; i++) {
    const order = (sorted[i] as T).order;
    if (order === i + 1) continue;
    const message =
      order === i
        ? `In ${where}, order ${order} appears more than once; orders must run 1, 2, 3, … without repeats.`
        : `In ${where}, order ${i + 1} is missing; orders must run 1, 2, 3, … without gaps.`;
    return fail(message);
  }
  const values = sorted.map((e) => ('items' in e ? e : e.value));
  return { ok: true, value: values as T extends OrderedGroup ? OrderedGroup[] : string[] };
}

function checkCompetitors(ids: readonly string[], state: OrderingState): Result<null> {
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) {
      const name = state.competitors.get(id)?.name;
      return fail(`${name ? `“${name}”` : `The competitor ${id}`} appears more than once in the list.`);
    }
    seen.add(id);
    if (!state.competitors.has(id))
      return fail(
        `The competitor ${id} is not in the ranking (it was deleted or never existed). Reload to get the current list.`,
      );
  }
  if (seen.size < state.competitors.size) {
    const missing = state.ranking.filter((id) => !seen.has(id));
    const names = missing.slice(0, 3).map((id) => `“${state.competitors.get(id)?.name ?? id}”`);
    const more = missing.length > 3 ? ` and ${missing.length - 3} more` : '';
    return fail(
      `The list is missing ${missing.length === 1 ? 'a competitor' : `${missing.length} competitors`}: ${names.join(', ')}${more}. Every competitor must be in it exactly once; reload to get the current list.`,
    );
  }
  return { ok: true, value: null };
}

function checkSegments(ids: readonly string[], state: OrderingState): Result<null> {
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id))
      return fail(`The segment ${state.segmentNames.get(id) ?? id} appears more than once on the board.`);
    seen.add(id);
    if (!state.segmentNames.has(id)) return fail(`There is no segment “${id}”.`);
  }
  const missing = state.segments.filter((id) => !seen.has(id));
  if (missing.length > 0)
    return fail(
      `The board is missing the segment${missing.length > 1 ? 's' : ''} ${missing.map((id) => state.segmentNames.get(id) ?? id).join(', ')}; every segment must be in it exactly once, empty ones too.`,
    );
  return { ok: true, value: null };
}

const invalid = (message: string) => reject('validation', message);

/** Someone reordered after this list was loaded: say who moved what. */
function stale(state: OrderingState, expected: number) {
  const since = state.recent.filter((c) => c.version > expected);
  const shown = since.slice(-3).map((c) => `${c.actorName} ${c.summary}`);
  const more = since.length > 3 ? ` (and ${since.length - 3} more changes)` : '';
  const what = shown.length > 0 ? `${shown.join('; ')}${more}` : 'Someone else changed the order';
  return reject('conflict', `${what} after you loaded this list. It now shows the current order.`, {
    details: { currentVersion: state.version, changes: since.slice(-10) },
  });
}

/** The three pure pieces, for tests and tools; the handler folds in place (reorder.ts). */
export const orderingDecider: Decider<OrderingCommand, OrderingSourceEvent, OrderingState> = {
  initialState: initialOrderingState,
  evolve: evolveOrdering,
  decide: decideOrdering,
};
