import type { SortableCompetitor } from '#projections/competitor-list/ordering.queries.ts';
import type { Segment } from '#projections/segment-board/segment-board.queries.ts';
import { CommandKeyField, CsrfField } from '../../components/form-field.tsx';
import { ThreatBadge } from '../competitors/competitor-table.tsx';
import { Layout } from '../layout.tsx';
import { can } from '#events/user/permissions.ts';
import {
  DragHandle,
  MoveButtons,
  ReadOnlyHint,
  SortStatus,
  sortableRegion,
} from '../ordering/sortable-parts.tsx';
import type { PageContext } from '../page-context.ts';

export interface BoardView {
  segments: (Segment & { competitors: SortableCompetitor[]; count: number })[];
  version: number;
  /** The signed-in user may reorder, and every competitor is on the page. */
  sortable: boolean;
}

/**
 * The segment board (seed §7.6, grouped variant): segments as groups, competitors as items in rank
 * order. Editors move competitors within and between segments and move the segments themselves; each
 * drop calls the `segments` component's `reorganize` method with every group and its items.
 */
export function SegmentsPage({ page, view }: { page: PageContext; view: BoardView }) {
  const { segments, version, sortable } = view;
  return (
    <Layout page={page} title="Segments">
      <h1>Segments</h1>
      {sortable && (
        <p id="board-help" className="field__hint">
          <span data-drag-help>
            Drag a competitor or a segment by its grip, or focus a grip and press ↑ or ↓ (Home: to the top); ←
            and → move a competitor to the previous or next segment. The board is saved when you drop.
          </span>
          <span data-move-help>
            Move a competitor or a segment with its ↑ and ↓ buttons; each move is saved at once.
          </span>
        </p>
      )}
      {!can(page.user?.role, 'segments.reorder') && <ReadOnlyHint what="the board" />}
      <div
        id="segments-region"
        {...sortableRegion({
          layout: 'grouped',
          component: 'segments',
          method: 'reorganize',
          version,
          sortable,
        })}
      >
        <SortStatus />
        <form method="post" action="/segments/move">
          <CsrfField token={page.csrfToken} />
          <CommandKeyField />
          <input type="hidden" name="expect" value={version} />
          <div className="segment-board" data-sortable-groups>
            {segments.map((column) => (
              <section
                key={column.id}
                className="note-card sortable-group"
                aria-labelledby={`segment-${column.id}`}
                data-segment={column.id}
                data-id={column.id}
                data-name={column.name}
              >
                <h2 id={`segment-${column.id}`}>
                  {sortable && (
                    <DragHandle
                      kind="group"
                      label={`Move the segment ${column.name}`}
                      describedBy="board-help"
                    />
                  )}
                  {column.name}{' '}
                  <span className="field__hint" data-count>
                    {column.count.toLocaleString('en-US')}
                  </span>
                  {sortable && (
                    <MoveButtons name="segment" value={column.id} label={`the segment ${column.name}`} />
                  )}
                </h2>
                <ol className="board-list sortable-list" data-sortable-list={column.id}>
                  {column.competitors.map((c) => (
                    <li key={c.id} className="sortable-item" data-id={c.id} data-name={c.name}>
                      {sortable && <DragHandle label={`Move ${c.name}`} describedBy="board-help" />}
                      <a href={`/competitors/${c.id}`}>{c.name}</a> <ThreatBadge threat={c.threat} />
                      {sortable && <MoveButtons name="move" value={c.id} label={c.name} />}
                    </li>
                  ))}
                </ol>
                {column.count > column.competitors.length && (
                  <p className="field__hint">
                    and {(column.count - column.competitors.length).toLocaleString('en-US')} more
                  </p>
                )}
              </section>
            ))}
          </div>
        </form>
      </div>
    </Layout>
  );
}
