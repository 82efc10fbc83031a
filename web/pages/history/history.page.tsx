import { noteColumns } from '#events/competitor/fields.ts';
import type { CompetitorRow } from '#projections/competitor-list/competitor-row.ts';
import type { NoteHistoryPage } from '#projections/note-history/note-history.queries.ts';
import { DEFAULT_PER_PAGE } from '../../components/data-table/table-state.ts';
import { Pagination } from '../../components/pagination.tsx';
import { wordDiffs, type DiffPart } from '../../components/word-diff.ts';
import { Battlecard } from '../competitors/battlecard.page.tsx';
import { formatNumber, formatTime } from '../../components/format.ts';
import { instantOfWallTime, UTC, wallTimeOf, zoneLabel } from '../../components/time-zone.ts';
import { noteLabels } from '../competitors/competitor-table.tsx';
import { Layout } from '../layout.tsx';
import type { PageContext } from '../page-context.ts';

export interface HistoryProps {
  page: PageContext;
  competitorId: string;
  name: string;
  deleted: boolean;
  column: string;
  /** One page of versions, newest first. */
  history: NoteHistoryPage;
  perPage: number;
  asOf?: { at: Date; input: string; card: CompetitorRow | undefined; future: boolean };
  /** The as-of field as it was sent, shown again (also when it named no moment). */
  asOfInput: string;
  /** The zone the "as of" field is read in (its label says which). */
  asOfZone: string;
  /** Why the as-of field names no moment, shown under it. */
  asOfError?: string;
}

/** Old → new, word by word. A replaced word reads "old new": a space separates the pair on screen. */
function Diff({ parts }: { parts: DiffPart[] }) {
  return (
    <p className="diff note-card__text">
      {parts.map((part, i) =>
        part.kind === 'added' ? (
          <span key={i}>
            {parts[i - 1]?.kind === 'removed' && !/\s$/.test(parts[i - 1]?.text ?? '') ? ' ' : ''}
            <ins>{part.text}</ins>
          </span>
        ) : part.kind === 'removed' ? (
          <del key={i}>{part.text}</del>
        ) : (
          <span key={i}>{part.text}</span>
        ),
      )}
    </p>
  );
}

export function HistoryPage(props: HistoryProps) {
  const { page, competitorId, name, deleted, column, history, perPage, asOf, asOfError } = props;
  const { versions, total } = history;
  // One budget for the whole page, newest first: a long history of rewritten notes stays cheap to show.
  const diffs = wordDiffs(versions.map((v) => [v.previousValue, v.value] as const));
  const path = `/competitors/${competitorId}/history`;
  const hrefOf = (pageNumber: number) => {
    const query = new URLSearchParams();
    if (column) query.set('column', column);
    if (props.asOfInput) query.set('asOf', props.asOfInput);
    if (props.asOfInput) query.set('tz', props.asOfZone);
    query.set('page', String(pageNumber));
    query.set('perPage', String(perPage));
    return `${path}?${query.toString()}`;
  };
  const first = (history.page - 1) * perPage + 1;
  // "As of this change": the row's own time, to the second, on the clock the row is written on, so the
  // field then holds what the row says. Read through that second (momentOf), the card has this version. A
  // reading the clocks repeat (the hour they go back) names its first moment, so the second one's link
  // is written in UTC instead: the same moment, said unambiguously.
  const asOfChangeHref = (changedAt: Date) => {
    const second = Math.floor(changedAt.getTime() / 1000) * 1000;
    const local = wallTimeOf(changedAt, page.timeZone);
    const unambiguous = instantOfWallTime(new Date(`${local}.000Z`), page.timeZone).getTime() === second;
    const zone = unambiguous ? page.timeZone : UTC;
    const query = new URLSearchParams();
    if (column) query.set('column', column);
    query.set('asOf', unambiguous ? local : wallTimeOf(changedAt, UTC));
    query.set('tz', zone);
    if (history.page > 1) query.set('page', String(history.page));
    if (perPage !== DEFAULT_PER_PAGE) query.set('perPage', String(perPage));
    return `${path}?${query.toString()}#as-of-heading`;
  };
  return (
    <Layout page={page} title={`History of ${name}`}>
      {/* Live regions (web/client/refresh-regions.ts): a colleague's note change, rename or delete shows here;
          the filter form between them keeps what the viewer is typing. */}
      <div id="history-header" data-live-competitor={competitorId}>
        <div className="page-header">
          <h1>History of {name}</h1>
          {!deleted && (
            <a className="button no-print" href={`/competitors/${competitorId}`}>
              Back to the battlecard
            </a>
          )}
        </div>
        {deleted && (
          <p className="historical-banner">This competitor was deleted. Its history stays reviewable.</p>
        )}
      </div>
      <form method="get" className="table-toolbar" action={path}>
        {perPage !== DEFAULT_PER_PAGE && <input type="hidden" name="perPage" value={perPage} />}
        <label>
          Note{' '}
          <select name="column" defaultValue={column}>
            <option value="">All notes</option>
            {noteColumns.map((c) => (
              <option key={c} value={c}>
                {noteLabels[c]}
              </option>
            ))}
          </select>
        </label>
        <label>
          As of ({zoneLabel(props.asOfZone)}){' '}
          <input
            type="datetime-local"
            name="asOf"
            step="1"
            defaultValue={props.asOfInput}
            aria-invalid={asOfError ? true : undefined}
            aria-describedby={asOfError ? 'as-of-hint as-of-error' : 'as-of-hint'}
          />
        </label>
        <span className="field__hint" id="as-of-hint">
          To the second: the card has every change listed at or before it.
        </span>
        <input type="hidden" name="tz" value={props.asOfZone} />
        <button type="submit" className="button">
          Show
        </button>
      </form>
      {asOfError && (
        <p className="field__error" role="alert" id="as-of-error">
          {asOfError}
        </p>
      )}

      <div id="history-changes" data-live-competitor={competitorId}>
        {asOf && (
          <section aria-labelledby="as-of-heading" className="as-of">
            <p className="historical-banner" role="note" id="as-of-heading">
              {asOf.future ? (
                <>
                  {formatTime(asOf.at.toISOString(), page.timeZone, 'second')} has not come yet: this is the
                  battlecard as it is now.
                </>
              ) : (
                <>
                  Historical view: the battlecard as it was at{' '}
                  <time dateTime={asOf.at.toISOString()}>
                    {formatTime(asOf.at.toISOString(), page.timeZone, 'second')}
                  </time>
                  , with every change listed at or before that second. This is not the current state.
                </>
              )}
            </p>
            {asOf.card ? (
              <Battlecard
                competitor={asOf.card}
                canEditNotes={false}
                timeZone={page.timeZone}
                timePrecision="second"
              />
            ) : (
              <p>{name} did not exist at that moment.</p>
            )}
          </section>
        )}

        <h2>Note changes</h2>
        {versions.length === 0 ? (
          <p className="field__hint">No note changes{column ? ` to ${column}` : ''} yet.</p>
        ) : (
          <p className="data-table__count" data-history-count>
            {total === 1
              ? '1 change'
              : `${formatNumber(first)}–${formatNumber(first + versions.length - 1)} of ${formatNumber(total)} changes, newest first`}
          </p>
        )}
        {versions.length > 0 && (
          <ol className="history-list" start={first}>
            {versions.map((v, i) => (
              <li
                key={`${v.column}-${v.noteVersion}`}
                className="note-card"
                data-history-entry={`${v.column}:${v.noteVersion}`}
                data-as-of={asOf ? (v.changedAt <= asOf.at ? 'in' : 'after') : undefined}
              >
                <h3>
                  {noteLabels[v.column as keyof typeof noteLabels] ?? v.column} · version {v.noteVersion}
                </h3>
                <p className="note-card__meta">
                  {v.actorName},{' '}
                  <time dateTime={v.changedAt.toISOString()}>
                    {formatTime(v.changedAt.toISOString(), page.timeZone, 'second')}
                  </time>
                  {asOf && !asOf.future && v.changedAt > asOf.at && ' · made after the moment shown above'}
                  <span className="no-print">
                    {' · '}
                    <a href={asOfChangeHref(v.changedAt)}>Battlecard as of this change</a>
                  </span>
                </p>
                <Diff parts={diffs[i] ?? []} />
              </li>
            ))}
          </ol>
        )}
        <Pagination page={history.page} lastPage={Math.ceil(total / perPage)} href={hrefOf} />
      </div>
    </Layout>
  );
}
