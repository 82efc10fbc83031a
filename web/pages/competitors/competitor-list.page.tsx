import {
  competitorDefaultSort,
  type ListResult,
} from '#projections/competitor-list/competitor-list.queries.ts';
import { DataTable } from '../../components/data-table/data-table.tsx';
import { TableFragment } from '../../table-route.server.tsx';
import { toQueryString, type TableState } from '../../components/data-table/table-state.ts';
import { can } from '#events/user/permissions.ts';
import { Layout } from '../layout.tsx';
import type { PageContext } from '../page-context.ts';
import { competitorColumns } from './competitor-table.tsx';

export interface CompetitorListProps {
  page: PageContext;
  state: TableState;
  result: ListResult;
}

export function CompetitorTable({ page, state, result }: CompetitorListProps) {
  const role = page.user?.role;
  return (
    <DataTable
      liveRefresh="rows"
      defaultSort={competitorDefaultSort}
      id="competitors-table"
      path="/competitors"
      noun="competitors"
      state={state}
      columns={competitorColumns({
        canEdit: can(role, 'notes.edit'),
        canDelete: can(role, 'competitors.delete'),
        csrfToken: page.csrfToken,
        listQuery: toQueryString(state),
        timeZone: page.timeZone,
      })}
      rows={result.rows}
      count={result.count}
      lastPage={result.lastPage}
      rowKey={(r) => r.id}
    />
  );
}

export function CompetitorListPage(props: CompetitorListProps) {
  const canAdd = can(props.page.user?.role, 'competitors.create');
  return (
    <Layout page={props.page} title="Competitors">
      <div className="page-header">
        <h1>Competitors</h1>
        {canAdd && (
          <a className="button button--primary no-print" href="/competitors/new">
            Add competitor
          </a>
        )}
      </div>
      <CompetitorTable {...props} />
    </Layout>
  );
}

/** The XHR answer for this table (also what the benchmarks render). */
export function CompetitorListFragment(props: CompetitorListProps) {
  return (
    <TableFragment>
      <CompetitorTable {...props} />
    </TableFragment>
  );
}
