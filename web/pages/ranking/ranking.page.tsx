import type { SortableCompetitor } from '#projections/competitor-list/ordering.queries.ts';
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

export interface RankingView {
  rows: SortableCompetitor[];
  total: number;
  version: number;
  /** The signed-in user may reorder, and the whole list is on the page. */
  sortable: boolean;
}

/**
 * The priority ranking (seed §7.6, flat variant): every live competitor in rank order. Editors drag
 * (or use the keyboard, or the move buttons without JavaScript); each drop calls the `ranking`
 * component's `reorder` method with the whole list, expecting the version the list was rendered at.
 */
export function RankingPage({ page, view }: { page: PageContext; view: RankingView }) {
  const { rows, total, version, sortable } = view;
  return (
    <Layout page={page} title="Ranking">
      <h1>Priority ranking</h1>
      <section
        id="ranking-region"
        {...sortableRegion({ layout: 'flat', component: 'ranking', method: 'reorder', version, sortable })}
        aria-labelledby="ranking-title"
      >
        <h2 id="ranking-title" className="sr-only">
          Competitors by priority
        </h2>
        {total === 0 && (
          // Inside the region, so the first competitor added (live, by anyone) replaces this message.
          <div className="data-table__empty">
            <p>No competitors yet.</p>
            {can(page.user?.role, 'competitors.create') && (
              <a className="button" href="/competitors/new">
                Add competitor
              </a>
            )}
          </div>
        )}
        {sortable && total > 0 && (
          <p id="ranking-help" className="field__hint">
            <span data-drag-help>
              Drag a competitor by its grip, or focus the grip and press ↑ or ↓ (Home: to the top, End: to the
              bottom). The order is saved when you drop.
            </span>
            <span data-move-help>
              Move a competitor with its ↑ and ↓ buttons; each move is saved at once.
            </span>
          </p>
        )}
        {!can(page.user?.role, 'ranking.reorder') && <ReadOnlyHint what="the ranking" />}
        <SortStatus />
        <form method="post" action="/ranking/move">
          <CsrfField token={page.csrfToken} />
          <CommandKeyField />
          <input type="hidden" name="expect" value={version} />
          <ol className="ranking-list sortable-list" data-sortable-list="ranking">
            {rows.map((c) => (
              <li key={c.id} className="sortable-item" data-id={c.id} data-name={c.name}>
                {sortable && (
                  <DragHandle label={`Move ${c.name}, rank ${c.rank}`} describedBy="ranking-help" />
                )}
                <span className="sortable-item__rank" data-rank>
                  {c.rank}
                </span>
                <a href={`/competitors/${c.id}`}>{c.name}</a>
                <span className="field__hint">{c.segmentName}</span> <ThreatBadge threat={c.threat} />
                {sortable && <MoveButtons name="move" value={c.id} label={c.name} />}
              </li>
            ))}
          </ol>
        </form>
        {total > rows.length && (
          <p className="field__hint">
            Showing the top {rows.length.toLocaleString('en-US')} of {total.toLocaleString('en-US')}; a
            ranking this long is reordered from the table.{' '}
            <a href="/competitors?sort=rank:asc&page=1&perPage=100&search=">See all in the table</a>.
          </p>
        )}
      </section>
    </Layout>
  );
}
