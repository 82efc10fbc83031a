import { cutAtCharacter } from '#events/cut-at-character.ts';
import type { NoteColumn } from '#events/competitor/fields.ts';
import { noteColumns } from '#events/competitor/fields.ts';
import type { CompetitorRow } from '#projections/competitor-list/competitor-row.ts';
import type { Column } from '../../components/data-table/data-table.tsx';
import { CommandKeyField } from '../../components/form-field.tsx';
import { formatTime } from '../../components/format.ts';

export const noteLabels: Record<NoteColumn, string> = {
  strengths: 'Strengths',
  weaknesses: 'Weaknesses',
  pricing: 'Pricing',
  general: 'General',
};

/** Where a note's Edit button leads without JavaScript: the notes dialog (seed §5) as a plain form. */
export const noteFormPath = (competitorId: string, column: NoteColumn) =>
  `/competitors/${competitorId}/notes/${column}`;

/** Only http(s) addresses become links; anything else is shown as text. */
export const safeHref = (url: string | null): string | undefined =>
  url && /^https?:\/\//i.test(url) ? url : undefined;

export function ThreatBadge({ threat }: { threat: CompetitorRow['threat'] }) {
  return <span className={`badge badge--threat-${threat}`}>{threat}</span>;
}

export function NoteIndicators({ row, canEdit }: { row: CompetitorRow; canEdit: boolean }) {
  return (
    <ul className="note-indicators" aria-label="Notes">
      {noteColumns.map((column) => {
        const has = row.notes[column].trim() !== '';
        const label = `${noteLabels[column]} note${has ? '' : ' (empty)'} for ${row.name}`;
        return (
          <li key={column}>
            {/* Without JavaScript the button opens the note: its own page to edit it, or the battlecard
                showing it; with it, the notes dialog opens instead (web/client/notes-dialog.ts). */}
            <form
              className="note-indicator__form"
              method="get"
              action={canEdit ? noteFormPath(row.id, column) : `/competitors/${row.id}#note-${column}`}
            >
              <button
                type="submit"
                className={`note-indicator${has ? ' note-indicator--filled' : ''}`}
                data-note
                data-competitor-id={row.id}
                data-column={column}
                data-version={row.noteMeta[column]?.version ?? 0}
                data-value={row.notes[column]}
                data-can-edit={canEdit ? 'true' : 'false'}
                aria-label={label}
                title={has ? cutAtCharacter(row.notes[column], 200) : `No ${column} note`}
                disabled={!has && !canEdit}
              >
                {noteLabels[column].charAt(0)}
              </button>
            </form>
          </li>
        );
      })}
    </ul>
  );
}

export function competitorColumns(options: {
  canEdit: boolean;
  canDelete: boolean;
  csrfToken: string;
  /** The table's search, sort, page and rows per page as a query string: a delete comes back to them. */
  listQuery: string;
  /** The viewer's time zone: the last update is written on that clock. */
  timeZone: string;
}): Column<CompetitorRow>[] {
  return [
    {
      key: 'rank',
      label: 'Rank',
      sort: 'rank',
      className: 'col-rank',
      cell: (r) => r.rank.toLocaleString('en-US'),
    },
    {
      key: 'name',
      label: 'Name',
      sort: 'name',
      className: 'col-text',
      cell: (r) => <a href={`/competitors/${r.id}`}>{r.name}</a>,
    },
    { key: 'segment', label: 'Segment', sort: 'segment', cell: (r) => r.segmentName },
    { key: 'threat', label: 'Threat', sort: 'threat', cell: (r) => <ThreatBadge threat={r.threat} /> },
    {
      key: 'website',
      label: 'Website',
      className: 'col-website',
      cell: (r) => {
        const href = safeHref(r.website);
        return href ? (
          <a href={href} rel="noopener noreferrer nofollow" target="_blank">
            {r.website?.replace(/^https?:\/\//i, '')}
          </a>
        ) : (
          (r.website ?? '—')
        );
      },
    },
    { key: 'notes', label: 'Notes', cell: (r) => <NoteIndicators row={r} canEdit={options.canEdit} /> },
    {
      key: 'updated',
      label: 'Last updated',
      sort: 'updated',
      cell: (r) => <time dateTime={r.updatedAt}>{formatTime(r.updatedAt, options.timeZone)}</time>,
    },
    {
      key: 'actions',
      label: 'Actions',
      className: 'col-actions',
      cell: (r) => (
        <div className="row-actions">
          <a className="button button--small" href={`/competitors/${r.id}`} aria-label={`Open ${r.name}`}>
            Open
          </a>
          {options.canDelete && (
            <form method="post" action={`/competitors/${r.id}/delete`} data-confirm-delete>
              <input type="hidden" name="_csrf" value={options.csrfToken} />
              <input type="hidden" name="list" value={options.listQuery} />
              <CommandKeyField />
              <button
                type="submit"
                className="button button--small button--danger"
                aria-label={`Delete ${r.name}`}
              >
                Delete
              </button>
            </form>
          )}
        </div>
      ),
    },
  ];
}
