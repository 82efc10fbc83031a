import { z } from 'zod';
import { noteColumns } from '#events/competitor/fields.ts';
import { NotFoundError } from '#infra/errors.ts';
import { parseTableState } from '../../components/data-table/table-state.ts';
import { lastKnownName } from '#projections/audit-log/audit-log.queries.ts';
import { competitorAsOf } from '#projections/competitor-list/competitor-as-of.ts';
import { findCompetitor } from '#projections/competitor-list/competitor-list.queries.ts';
import { noteHistory } from '#projections/note-history/note-history.queries.ts';
import { catchUpWithList } from '../../realtime/caught-up.server.ts';
import { pageContext, renderHtml } from '../../render.server.tsx';
import { instantOfWallTime, knownTimeZone, UTC, zoneLabel } from '../../components/time-zone.ts';
import { route, type RouteDef } from '../../routing.server.ts';
import { HistoryPage } from './history.page.tsx';

const historyQuery = z.object({
  column: z.enum(noteColumns).optional().catch(undefined),
  // Checked by `momentOf`, which says what is wrong; any other shape (an array) is no moment at all.
  asOf: z.string().optional().catch(undefined),
  // The zone the "as of" was typed in (the form sends the one it was labelled with): a shared address
  // means the same moment to whoever opens it. Absent: the viewer's own zone.
  tz: z.string().optional().catch(undefined),
});

/**
 * Why the address names no one "as of" moment, when it gives the moment or its zone more than once
 * (`?asOf=…&asOf=…`, a hand-edited or pasted address): read as none, the page would show the card as
 * it is now, as if no moment had been asked for.
 */
function repeatedAsOf(query: Record<string, string | string[] | undefined>): { error: string } | undefined {
  const repeated = [
    Array.isArray(query.asOf) && '“as of”',
    Array.isArray(query.tz) && 'the time zone (tz)',
  ].filter(Boolean);
  return repeated.length
    ? { error: `The address gives ${repeated.join(' and ')} more than once. Give one date and time below.` }
    : undefined;
}

/** A reading names a whole second: the moment read is its last millisecond (events are stamped to the ms). */
const LAST_MS_OF_A_SECOND = 999;

/**
 * The moment a datetime-local field names on the clock of `zone` (the form names the zone), or why it
 * names none: the field is typed by hand in some browsers, so "2024-02-30T10:00" or "yesterday" reach us.
 * Not read as the nearest real moment (JavaScript rolls 30 February over to 1 March): the page says what
 * to type. A reading the clocks skip or repeat (daylight saving) is read as instantOfWallTime says.
 *
 * Read to the second and through it (docs/decisions/0025-as-of-to-the-second.md): "14:05:30" is the last
 * instant of that second, so every change the history lists at 14:05:30 (accepted at 14:05:30.4, say)
 * is in the card. A reading without seconds is :00, as the field itself shows it (step="1") and as a
 * browser sends a reading whose seconds are 00 ("14:05:00" arrives as "14:05").
 */
export function momentOf(input: string, zone = UTC): { at: Date } | { error: string } {
  const error = `“${input.slice(0, 40)}” is not a date and time. Use the form YYYY-MM-DDTHH:MM:SS (${zoneLabel(zone)}; the seconds may be left out), for example 2024-02-28T14:30:05.`;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(input) || input.startsWith('0000')) return { error };
  const full = input.length === 16 ? `${input}:00` : input;
  const wall = new Date(`${full}.000Z`);
  // A date that does not exist (30 February, 25:00) reads back as another one.
  if (Number.isNaN(wall.getTime()) || wall.toISOString().slice(0, 19) !== full) return { error };
  return { at: new Date(instantOfWallTime(wall, zone).getTime() + LAST_MS_OF_A_SECOND) };
}

/** The zone an "as of" is read in: the one the address names, else the viewer's; or why there is none. */
function asOfZone(named: string | undefined, viewer: string): { zone: string } | { error: string } {
  if (named === undefined) return { zone: viewer };
  const zone = knownTimeZone(named);
  return zone
    ? { zone }
    : {
        error: `“${named.slice(0, 40)}” is not a time zone. Use a name such as Europe/Berlin or UTC, or leave it out for your own.`,
      };
}

export const historyRoutes: RouteDef[] = [
  route('GET', '/competitors/:id/history', 'history.view', async (ctx, deps) => {
    // A UUID: checked by the router before any handler runs (web/input.server.ts).
    const id = ctx.params.id ?? '';
    const query = historyQuery.parse({
      column: ctx.query.column || undefined,
      asOf: ctx.query.asOf || undefined,
      tz: ctx.query.tz || undefined,
    });
    await catchUpWithList(ctx, deps, ['note-history', 'audit-log']);
    const context = pageContext(ctx);
    const zoneOrError = asOfZone(query.tz, context.timeZone);
    const zone = 'zone' in zoneOrError ? zoneOrError.zone : context.timeZone;
    const current = await findCompetitor(deps.db.pool, id);
    const name = current?.name ?? (await lastKnownName(deps.db.pool, id));
    if (!name) throw new NotFoundError('No such competitor.');
    // Paged like the tables (15 per page by default, the same lenient `page` and `perPage`): a long
    // history of long notes made a page of many megabytes.
    const { page, perPage } = parseTableState(ctx.query, []);
    const history = await noteHistory(deps.db.pool, id, { column: query.column, page, perPage });
    const moment =
      repeatedAsOf(ctx.query) ??
      ('error' in zoneOrError ? zoneOrError : query.asOf ? momentOf(query.asOf, zone) : undefined);
    // Read after the moment: a later change is not in the card, so "as it is now" holds.
    const future = moment && 'at' in moment ? moment.at.getTime() > Date.now() : false;
    const card =
      moment && 'at' in moment ? await competitorAsOf(deps.store, deps.db.pool, id, moment.at) : undefined;
    const asOf =
      moment && 'at' in moment
        ? {
            at: moment.at,
            input: query.asOf ?? '',
            future,
            // A past card has no rank (the events carry none); the card "as it is now" has today's.
            card: future && card && current ? { ...card, rank: current.rank } : card,
          }
        : undefined;
    renderHtml(
      ctx,
      <HistoryPage
        page={context}
        competitorId={id}
        name={name}
        deleted={!current}
        column={query.column ?? ''}
        history={history}
        perPage={perPage}
        asOf={asOf}
        asOfInput={query.asOf ?? ''}
        asOfZone={zone}
        asOfError={moment && 'error' in moment ? moment.error : undefined}
      />,
      // The page still shows, with the field as typed and what to type instead.
      moment && 'error' in moment ? 400 : 200,
    );
  }),
];
