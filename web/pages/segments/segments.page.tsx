import type { BoardColumn } from '#projections/segment-board/segment-board.queries.ts';
import { ThreatBadge } from '../competitors/competitor-table.tsx';
import { Layout } from '../layout.tsx';
import type { PageContext } from '../page-context.ts';

/** The segment board, read-only: segments as groups, competitors as items in rank order. */
export function SegmentsPage({ page, board }: { page: PageContext; board: BoardColumn[] }) {
  return (
    <Layout page={page} title="Segments">
      <h1>Segments</h1>
      <div className="segment-board">
        {board.map((column) => (
          <section
            key={column.id}
            className="note-card"
            aria-labelledby={`segment-${column.id}`}
            data-segment={column.id}
          >
            <h2 id={`segment-${column.id}`}>
              {column.name} <span className="field__hint">{column.count.toLocaleString('en-US')}</span>
            </h2>
            <ol className="board-list">
              {column.competitors.map((c) => (
                <li key={c.id}>
                  <a href={`/competitors/${c.id}`}>{c.name}</a>{' '}
                  <ThreatBadge threat={c.threat as 'low' | 'medium' | 'high'} />
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
    </Layout>
  );
}
