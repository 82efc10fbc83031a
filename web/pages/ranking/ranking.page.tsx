import type { CompetitorRow } from '#projections/competitor-list/competitor-row.ts';
import { ThreatBadge } from '../competitors/competitor-table.tsx';
import { Layout } from '../layout.tsx';
import type { PageContext } from '../page-context.ts';

/** The priority ranking, read-only: the top of the list in rank order. */
export function RankingPage({
  page,
  rows,
  total,
}: {
  page: PageContext;
  rows: CompetitorRow[];
  total: number;
}) {
  return (
    <Layout page={page} title="Ranking">
      <h1>Priority ranking</h1>
      <ol className="ranking-list">
        {rows.map((c) => (
          <li key={c.id} data-rank={c.rank}>
            <a href={`/competitors/${c.id}`}>{c.name}</a> · {c.segmentName} <ThreatBadge threat={c.threat} />
          </li>
        ))}
      </ol>
      {total > rows.length && (
        <p className="field__hint">
          Showing the top {rows.length} of {total.toLocaleString('en-US')}.{' '}
          <a href="/competitors?sort=rank:asc&page=1&perPage=100&search=">See all in the table</a>.
        </p>
      )}
    </Layout>
  );
}
