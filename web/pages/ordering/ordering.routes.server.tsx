import type { RouterContext } from '@koa/router';
import { z } from 'zod';
import type { Command } from '#events/command.ts';
import { MAX_ORDERED_ITEMS } from '#events/ordering/commands.ts';
import { ValidationError } from '#infra/errors.ts';
import { readOrdering, type SortableCompetitor } from '#projections/competitor-list/ordering.queries.ts';
import type { AppDeps } from '../../app-deps.server.ts';
import { addFlash } from '../../auth/flash.server.ts';
import { fieldsNotText } from '../../zod-form.server.ts';
import { can } from '#events/user/permissions.ts';
import { changeNotice, dispatchAndWaitVisible, recallChange } from '../../commands.server.ts';
import { catchUpWithList } from '../../realtime/caught-up.server.ts';
import { pageContext, renderHtml } from '../../render.server.tsx';
import { route, type RouteDef } from '../../routing.server.ts';
import type { SessionUser } from '../page-context.ts';
import { RankingPage } from '../ranking/ranking.page.tsx';
import { SegmentsPage, type BoardView } from '../segments/segments.page.tsx';

/** A ranking too long to drag is shown as its top, read-only. */
const READ_ONLY_TOP = 100;
const READ_ONLY_PER_SEGMENT = 50;
/** Read models a reorder must show before the call answers. */
export const orderingProjections = ['competitor-list', 'segment-board'] as const;

const role = (ctx: RouterContext) => (ctx.state.user as SessionUser).role;

async function loadRanking(deps: AppDeps) {
  const view = await readOrdering(deps.db.pool, MAX_ORDERED_ITEMS + 1);
  const complete = view.rows.length <= MAX_ORDERED_ITEMS;
  return { ...view, version: view.rankingVersion, complete };
}

async function loadBoard(deps: AppDeps, canSort: boolean): Promise<BoardView> {
  const ranking = await loadRanking(deps);
  const { segments } = ranking;
  const bySegment = new Map<string, SortableCompetitor[]>(segments.map((s) => [s.id, []]));
  for (const c of ranking.rows) bySegment.get(c.segmentId)?.push(c);
  return {
    segments: segments.map((s) => {
      const all = bySegment.get(s.id) ?? [];
      return {
        ...s,
        count: all.length,
        competitors: ranking.complete ? all : all.slice(0, READ_ONLY_PER_SEGMENT),
      };
    }),
    version: ranking.boardVersion,
    sortable: canSort && ranking.complete,
  };
}

/** `<id>:up` or `<id>:down`, from a move button. */
const moveValue = z
  .string()
  .regex(/^[a-z0-9-]{1,64}:(up|down)$/, 'Unknown move.')
  .transform((v) => {
    const [id, direction] = v.split(':') as [string, 'up' | 'down'];
    return { id, direction };
  });
const staleMove = 'This page is out of date. Reload it and move again.';
/** The version a form writes: digits only (not `0x10`, `1e3`). */
const VERSION_TEXT = /^\s*\d{1,15}\s*$/;
const moveForm = z.object({
  move: moveValue.optional(),
  segment: moveValue.optional(),
  // A form's digits, or a JSON whole number. Empty (or blank) is missing, not version 0: coerced, '' read
  // as 0 moved a never-reordered list; so did JSON's null, false and [] (and true read as 1, '0x10' as 16).
  expect: z.preprocess(
    (v) => (typeof v !== 'string' ? v : v.trim() === '' ? undefined : VERSION_TEXT.test(v) ? Number(v) : NaN),
    z.number({ error: staleMove }).int(staleMove).nonnegative(staleMove),
  ),
});
const moveFields = ['move', 'segment', 'expect'] as const;

/**
 * The move form, each field once: a field sent twice (a list) or, in JSON, as an object is refused in
 * words, not as "expected string, received array" (or, for `expect`, as an out-of-date page).
 */
function parseMoveForm(body: unknown) {
  const repeated = fieldsNotText(body, moveFields).filter(
    (field) => !(field === 'expect' && typeof (body as { expect?: unknown }).expect === 'number'),
  );
  if (repeated.length)
    throw new ValidationError(
      `The form's ${repeated.map((f) => `“${f}”`).join(' and ')} came more than once (or not as text), ` +
        'so nothing was moved. Reload the page and move again.',
    );
  return moveForm.safeParse(body);
}
const bothNamed =
  'This form names both a competitor (move) and a segment (segment) to move. Send one: use the move buttons on the page.';
/** The form's first problem, in words; `missing` when it names nothing to move. */
const moveProblem = (form: z.ZodSafeParseResult<unknown>, missing: string): string =>
  form.success ? missing : (form.error.issues[0]?.message ?? missing);

/** Swaps `id` with its neighbour; false if there is none that way. */
function swap(list: string[], id: string, direction: 'up' | 'down'): boolean {
  const at = list.indexOf(id);
  const other = direction === 'up' ? at - 1 : at + 1;
  if (at < 0 || other < 0 || other >= list.length) return false;
  [list[at], list[other]] = [list[other] as string, list[at] as string];
  return true;
}

const items = (ids: readonly string[]) => ids.map((value, i) => ({ order: i + 1, value }));

/** Told when the competitor (or segment) a move button names is not on the page's list any more. */
const notListed = (what: 'competitor' | 'segment', where: 'ranking' | 'board') =>
  `The ${what} you moved is not in the ${where} any more (it was deleted, or never existed). This is the current order; move again from here.`;

/**
 * Sends the move-button form's reorder like a drop would, and lands on the same page. `gone`: the
 * notice when nothing moved because the item is not listed (deleted meanwhile), rather than at the end.
 */
async function submitMove(
  ctx: RouterContext,
  deps: AppDeps,
  back: string,
  command: Command | undefined,
  what: string,
  gone?: string,
) {
  // Nothing to move that way: unless this is the same click sent again (a double click, a resubmission
  // after a lost answer), whose first sending moved it there. That one is answered as it was, "Moved".
  const result = command
    ? await dispatchAndWaitVisible(ctx, deps, command, orderingProjections)
    : await recallChange(ctx, deps, orderingProjections);
  if (!result) {
    addFlash(ctx, { kind: 'info', text: gone ?? `${what} cannot move further that way.` });
    return ctx.redirect(back);
  }
  const { outcome, visible } = result;
  addFlash(ctx, changeNotice(ctx, outcome, `Moved ${what}.`, visible));
  ctx.redirect(back);
}

export const orderingRoutes: RouteDef[] = [
  route('GET', '/ranking', 'ranking.view', async (ctx, deps) => {
    const { rows, version, complete, total } = await loadRanking(deps);
    renderHtml(
      ctx,
      <RankingPage
        page={pageContext(ctx)}
        view={{
          rows: complete ? rows : rows.slice(0, READ_ONLY_TOP),
          total,
          version,
          sortable: complete && can(role(ctx), 'ranking.reorder'),
        }}
      />,
    );
  }),

  route('GET', '/segments', 'segments.view', async (ctx, deps) => {
    // The order of segments is the board's own read model: a live refresh waits for it to catch up.
    await catchUpWithList(ctx, deps, ['segment-board']);
    const view = await loadBoard(deps, can(role(ctx), 'segments.reorder'));
    renderHtml(ctx, <SegmentsPage page={pageContext(ctx)} view={view} />);
  }),

  route('POST', '/ranking/move', 'ranking.reorder', async (ctx, deps) => {
    const form = parseMoveForm(ctx.request.body);
    if (!form.success || !form.data.move)
      throw new ValidationError(moveProblem(form, 'Choose a competitor to move up or down.'));
    const { id, direction } = form.data.move;
    const { rows, complete } = await loadRanking(deps);
    if (!complete) throw new ValidationError('This ranking is too long to reorder here; use the table.');
    const list = rows.map((r) => r.id);
    const name = rows.find((r) => r.id === id)?.name ?? 'This competitor';
    const moved = swap(list, id, direction);
    await submitMove(
      ctx,
      deps,
      '/ranking',
      moved
        ? { type: 'ReorderRanking', payload: { items: items(list), expectedVersion: form.data.expect } }
        : undefined,
      name,
      list.includes(id) ? undefined : notListed('competitor', 'ranking'),
    );
  }),

  route('POST', '/segments/move', 'segments.reorder', async (ctx, deps) => {
    const form = parseMoveForm(ctx.request.body);
    // Both named: the target came from one and the branch from the other ("the segment <uuid> cannot move").
    if (form.success && form.data.move && form.data.segment) throw new ValidationError(bothNamed);
    const target = form.success ? (form.data.move ?? form.data.segment) : undefined;
    if (!form.success || !target)
      throw new ValidationError(moveProblem(form, 'Choose a competitor or segment to move.'));
    const board = await loadBoard(deps, true);
    if (!board.sortable) throw new ValidationError('This board is too large to reorder here; use the table.');
    const segmentIds = board.segments.map((s) => s.id);
    const members = new Map(board.segments.map((s) => [s.id, s.competitors.map((c) => c.id)]));
    let moved = false;
    let what = 'This competitor';
    const listed = form.data.segment
      ? segmentIds.includes(target.id)
      : [...members.values()].some((list) => list.includes(target.id));
    if (form.data.segment) {
      moved = swap(segmentIds, target.id, target.direction);
      what = `the segment ${board.segments.find((s) => s.id === target.id)?.name ?? target.id}`;
    } else {
      for (const segment of board.segments) {
        const list = members.get(segment.id) ?? [];
        if (!list.includes(target.id)) continue;
        what = segment.competitors.find((c) => c.id === target.id)?.name ?? what;
        moved = swap(list, target.id, target.direction);
      }
    }
    const groups = segmentIds.map((id, i) => ({
      order: i + 1,
      value: id,
      items: items(members.get(id) ?? []),
    }));
    await submitMove(
      ctx,
      deps,
      '/segments',
      moved
        ? { type: 'ReorganizeSegments', payload: { groups, expectedVersion: form.data.expect } }
        : undefined,
      what,
      listed ? undefined : notListed(form.data.segment ? 'segment' : 'competitor', 'board'),
    );
  }),
];
