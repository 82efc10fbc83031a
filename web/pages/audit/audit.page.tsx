import { auditDefaultSort, type AuditRow } from '#projections/audit-log/audit-log.queries.ts';
import { DataTable, type Column, type ResultCount } from '../../components/data-table/data-table.tsx';
import type { TableState } from '../../components/data-table/table-state.ts';
import { formatTime } from '../../components/format.ts';
import { Layout } from '../layout.tsx';
import type { PageContext } from '../page-context.ts';

export interface AuditProps {
  page: PageContext;
  state: TableState;
  rows: AuditRow[];
  count: ResultCount;
  lastPage: number;
}

/** The columns; times on the viewer's clock (`timeZone`). */
const auditColumns = (timeZone: string): Column<AuditRow>[] => [
  {
    key: 'time',
    label: 'Time',
    sort: 'time',
    cell: (r) => <time dateTime={r.at.toISOString()}>{formatTime(r.at.toISOString(), timeZone)}</time>,
  },
  { key: 'actor', label: 'Actor', sort: 'actor', cell: (r) => r.actorName },
  { key: 'type', label: 'Event', sort: 'type', cell: (r) => <code>{r.type}</code> },
  {
    key: 'competitor',
    label: 'Competitor',
    sort: 'competitor',
    cell: (r) =>
      r.competitorId && r.competitorName ? (
        <a href={`/competitors/${r.competitorId}/history`}>{r.competitorName}</a>
      ) : (
        '—'
      ),
  },
  { key: 'summary', label: 'What changed', className: 'col-text', cell: (r) => r.summary },
];

export function AuditTable(props: AuditProps) {
  return (
    <DataTable
      liveRefresh="audit"
      defaultSort={auditDefaultSort}
      id="audit-table"
      path="/audit"
      noun="events"
      state={props.state}
      columns={auditColumns(props.page.timeZone)}
      rows={props.rows}
      count={props.count}
      lastPage={props.lastPage}
      rowKey={(r) => String(r.position)}
    />
  );
}

export function AuditPage(props: AuditProps) {
  return (
    <Layout page={props.page} title="Audit log">
      <h1>Audit log</h1>
      <p className="field__hint">
        Every change ever made, newest first. Search by actor, event type, competitor or text.
      </p>
      <AuditTable {...props} />
    </Layout>
  );
}
