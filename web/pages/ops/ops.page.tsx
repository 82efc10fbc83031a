import type { DeadLetter } from '#events/bus/command-bus.ts';
import { formatNumber, formatTime } from '../../components/format.ts';
import { Layout } from '../layout.tsx';
import type { PageContext } from '../page-context.ts';

export interface OpsStatus {
  head: number;
  projections: { name: string; version: number; position: number; lag: number; updatedAt: Date | null }[];
  pending: number;
  deadLetters: DeadLetter[];
  eventsLastMinute: number;
  eventsLastHour: number;
  database: string;
  bus: string;
}

export function OpsPage({ page, status }: { page: PageContext; status: OpsStatus }) {
  return (
    <Layout page={page} title="Operations">
      <h1>Operations</h1>
      <dl className="battlecard__facts">
        <dt>Database</dt>
        <dd>{status.database}</dd>
        <dt>Command bus</dt>
        <dd>{status.bus}</dd>
        <dt>Newest event</dt>
        <dd>position {formatNumber(status.head)}</dd>
        <dt>Throughput</dt>
        <dd>
          {formatNumber(status.eventsLastMinute)} events in the last minute,{' '}
          {formatNumber(status.eventsLastHour)} in the last hour
        </dd>
        <dt>Commands awaiting acknowledgement</dt>
        <dd>{status.pending}</dd>
      </dl>
      <h2>Projections</h2>
      <table className="simple-table">
        <thead>
          <tr>
            <th scope="col">Projection</th>
            <th scope="col">Version</th>
            <th scope="col">Checkpoint</th>
            <th scope="col">Behind</th>
            <th scope="col">Last batch</th>
          </tr>
        </thead>
        <tbody>
          {status.projections.map((p) => (
            <tr key={p.name}>
              <td>{p.name}</td>
              <td>{p.version}</td>
              <td>{formatNumber(p.position)}</td>
              <td>{formatNumber(p.lag)}</td>
              <td>{p.updatedAt ? formatTime(p.updatedAt.toISOString()) : 'never'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Dead letters</h2>
      {status.deadLetters.length === 0 ? (
        <p className="field__hint">None: every command was handled.</p>
      ) : (
        <ul>
          {status.deadLetters.map((d) => (
            <li key={d.id}>
              <code>{d.envelope?.command.type ?? 'unreadable entry'}</code> after {d.deliveryCount}{' '}
              deliveries: {d.error}
            </li>
          ))}
        </ul>
      )}
    </Layout>
  );
}
