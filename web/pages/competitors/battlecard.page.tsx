import { noteColumns } from '#events/competitor/fields.ts';
import type { CompetitorRow } from '#projections/competitor-list/competitor-row.ts';
import { can } from '#events/user/permissions.ts';
import { Layout } from '../layout.tsx';
import type { PageContext } from '../page-context.ts';
import { formatTime, type TimePrecision } from '../../components/format.ts';
import { noteFormPath, noteLabels, safeHref, ThreatBadge } from './competitor-table.tsx';

/** The battlecard's body; also used for the historical "as of" view. */
export function Battlecard({
  competitor: c,
  canEditNotes,
  timeZone,
  timePrecision = 'minute',
}: {
  competitor: CompetitorRow;
  canEditNotes: boolean;
  /** The viewer's time zone: times are written on that clock. */
  timeZone: string;
  /** 'second' in the "as of" card, compared with the history's rows (written to the second). */
  timePrecision?: TimePrecision;
}) {
  const website = safeHref(c.website);
  return (
    <div className="battlecard" id="battlecard" data-competitor-id={c.id}>
      <dl className="battlecard__facts">
        <dt>Rank</dt>
        {/* A past moment's card has no rank (competitorAsOf): none is shown rather than "0". */}
        <dd>{c.rank > 0 ? c.rank.toLocaleString('en-US') : '—'}</dd>
        <dt>Segment</dt>
        <dd>{c.segmentName}</dd>
        <dt>Threat</dt>
        <dd>
          <ThreatBadge threat={c.threat} />
        </dd>
        <dt>Website</dt>
        <dd>
          {website ? (
            <a href={website} rel="noopener noreferrer nofollow" target="_blank">
              {c.website}
            </a>
          ) : (
            (c.website ?? '—')
          )}
        </dd>
        <dt>Headquarters</dt>
        <dd>{c.headquarters ?? '—'}</dd>
        <dt>Last updated</dt>
        <dd>
          <time dateTime={c.updatedAt}>{formatTime(c.updatedAt, timeZone, timePrecision)}</time>
        </dd>
      </dl>
      <div className="notes-grid">
        {noteColumns.map((column) => {
          const meta = c.noteMeta[column];
          const text = c.notes[column];
          return (
            <section
              key={column}
              className="note-card"
              data-note-card={column}
              aria-labelledby={`note-${column}`}
            >
              <h2 id={`note-${column}`}>
                {noteLabels[column]}
                {canEditNotes && (
                  // A submit of the form below: without JavaScript it opens the note's own page; with it,
                  // the notes dialog opens instead (web/client/notes-dialog.ts prevents the submit).
                  <button
                    type="submit"
                    form={`note-form-${column}`}
                    className="button button--small no-print"
                    data-note
                    data-competitor-id={c.id}
                    data-column={column}
                    data-version={meta?.version ?? 0}
                    data-value={text}
                    data-can-edit="true"
                    aria-label={`Edit ${noteLabels[column].toLowerCase()} note`}
                  >
                    Edit
                  </button>
                )}
              </h2>
              {canEditNotes && (
                <form id={`note-form-${column}`} method="get" action={noteFormPath(c.id, column)} hidden />
              )}
              {text ? (
                <p className="note-card__text" data-note-text>
                  {text}
                </p>
              ) : (
                <p className="note-card__text field__hint" data-note-text>
                  No {column} notes yet.
                </p>
              )}
              {meta && (
                <p className="note-card__meta" data-note-meta>
                  Last edited by {meta.byName},{' '}
                  <time dateTime={meta.at}>{formatTime(meta.at, timeZone, timePrecision)}</time>
                </p>
              )}
            </section>
          );
        })}
      </div>
    </div>
  );
}

export function BattlecardPage({ page, competitor }: { page: PageContext; competitor: CompetitorRow }) {
  const role = page.user?.role;
  return (
    <Layout page={page} title={competitor.name}>
      {/* What the Print button prints: the card under its name (a printed card said whose it was nowhere).
          Live regions inside it (web/client/refresh-regions.ts): a colleague's rename reaches the heading too. */}
      <article className="battlecard-sheet" id="battlecard-sheet" aria-labelledby="battlecard-name">
        <div className="page-header" id="battlecard-header" data-live-competitor={competitor.id}>
          <h1 id="battlecard-name">{competitor.name}</h1>
          <div className="row-actions no-print">
            <button type="button" className="button" data-print="#battlecard-sheet">
              Print battlecard
            </button>
            {can(role, 'history.view') && (
              <a className="button" href={`/competitors/${competitor.id}/history`}>
                History
              </a>
            )}
            {can(role, 'competitors.edit') && (
              <a className="button" href={`/competitors/${competitor.id}/edit`}>
                Edit
              </a>
            )}
          </div>
        </div>
        {/* The card shows the rank, which moves with changes to other competitors. */}
        <div id="battlecard-region" data-live-competitor={competitor.id} data-live-list="">
          <Battlecard
            competitor={competitor}
            canEditNotes={can(role, 'notes.edit')}
            timeZone={page.timeZone}
          />
        </div>
      </article>
    </Layout>
  );
}
