import type { DeadLetter } from '#events/store/dead-letters.ts';
import type { Disagreement, LiveInstance } from '#infra/instances.ts';
import { deadLetterKey } from '#services/operations/dead-letter-actions.ts';
import { CommandKeyField, CsrfField } from '../../components/form-field.tsx';
import { formatTime } from '../../components/format.ts';
import { ScrollRegion } from '../../components/scroll-region.tsx';
import { Layout } from '../layout.tsx';
import type { PageContext } from '../page-context.ts';
import { Sparkline } from './sparkline.tsx';

export interface OpsStatus {
  head: number;
  projections: {
    name: string;
    version: number;
    /** Being rebuilt blue-green for a new code version (the old tables serve meanwhile). */
    rebuilding: boolean;
    /** The version a newer Rivals built it with (a rolling upgrade): this one leaves it alone. */
    builtByNewer: number | null;
    position: number;
    lag: number;
    lagSeconds: number;
    updatedAt: Date | null;
  }[];
  /** Changes waiting behind a transaction left open, and which one (decision 0022); undefined: none. */
  heldBack?: string | undefined;
  /** Undefined when the command bus did not answer (the rest of the page still shows). */
  pending: number | undefined;
  /** Changes accepted (in the inbox) and not handled yet, and how long the oldest has waited. */
  backlog: { count: number; oldestSeconds: number };
  /** Kept in the database: listed, retried and discarded whether or not the bus answers. */
  deadLetters: DeadLetter[];
  /** All dead letters, of which `deadLetters` are the newest. */
  deadLetterCount: number;
  /** Dead letters (by id) whose Retry or Discard is recorded but not carried out yet. */
  unfinished: Record<string, 'retry' | 'discard'>;
  eventsLastMinute: number;
  eventsLastHour: number;
  /** Events per minute over the last hour, oldest first. */
  perMinute: number[];
  /** The server and worker processes seen in the last 30 s (the instance registry). */
  instances: LiveInstance[];
  /** Shared settings on which they differ. */
  disagreements: Disagreement[];
  database: string;
  bus: string;
}

const n = (value: number) => value.toLocaleString('en-US');

const seconds = (value: number) =>
  value < 1 ? '0 s' : value < 120 ? `${Math.round(value)} s` : `${Math.round(value / 60)} min`;

/** The inbox backlog in words: how many, and for how long the oldest has waited. */
const backlog = ({ count, oldestSeconds }: OpsStatus['backlog']) =>
  count === 0 ? '0' : `${n(count)}, the oldest waiting ${seconds(oldestSeconds)}`;

/** One confirmed POST button on a dead letter (`/ops/dead-letters/:id/<action>`). */
function LetterActionForm(props: {
  letter: DeadLetter;
  action: 'retry' | 'discard';
  confirm: string;
  confirmButton: string;
  buttonClass: string;
  label: string;
  csrfToken: string;
}) {
  return (
    <form
      method="post"
      action={`/ops/dead-letters/${encodeURIComponent(props.letter.id)}/${props.action}`}
      data-confirm={props.confirm}
      data-confirm-button={props.confirmButton}
    >
      <CsrfField token={props.csrfToken} />
      <CommandKeyField />
      {/* For a click that arrives after the letter was acted on: what was done, and by whom. */}
      <input type="hidden" name="letter" value={deadLetterKey(props.letter)} />
      {/* Its name for the auto-refresh, which keeps focus on it (web/client/keep-focus.ts). */}
      <button type="submit" className={props.buttonClass} data-control={`${props.action}-${props.letter.id}`}>
        {props.label}
      </button>
    </form>
  );
}

function DeadLetterActions({ letter, csrfToken }: { letter: DeadLetter; csrfToken: string }) {
  const what = letter.envelope?.command.type ?? 'this entry';
  return (
    <div className="dead-letter__actions">
      {letter.envelope && (
        <LetterActionForm
          letter={letter}
          action="retry"
          confirm={`Retry ${what}? It is sent to the workers once more.`}
          confirmButton="Yes, retry it"
          buttonClass="button"
          label="Retry"
          csrfToken={csrfToken}
        />
      )}
      <LetterActionForm
        letter={letter}
        action="discard"
        confirm={`Discard ${what}? It will never be handled.`}
        confirmButton="Yes, discard it"
        buttonClass="button button--danger"
        label="Discard"
        csrfToken={csrfToken}
      />
    </div>
  );
}

/** What differs between instances, which instance runs with what, and what it breaks. */
function Disagreements({ disagreements }: { disagreements: Disagreement[] }) {
  if (disagreements.length === 0) return null;
  return (
    <div className="field__error" role="alert" data-instance-disagreements>
      {disagreements.map((d) => (
        <div key={d.setting}>
          <p>
            <strong>{`The instances run with different ${d.setting} values.`}</strong>{' '}
            {`${d.consequence} Give every instance the same ${d.setting} and restart the others.`}
          </p>
          <ul>
            {d.groups.map((g) => (
              <li key={g.value}>
                {`${d.setting === 'SESSION_SECRET' ? `secret with fingerprint ${g.value}` : `“${g.value}”`}: ${g.instances.join(', ')}`}
              </li>
            ))}
          </ul>
        </div>
      ))}
    </div>
  );
}

/** The live processes and the shared settings each runs with. */
function Instances({ instances, timeZone }: { instances: LiveInstance[]; timeZone: string }) {
  return (
    <ScrollRegion label="Instances">
      <table className="simple-table">
        <ColumnHeads names={['Instance', 'Role', 'Session secret', 'Redis prefix', 'Started', 'Last seen']} />
        <tbody>
          {instances.map((i) => (
            <tr key={i.instanceId} data-instance={i.instanceId}>
              <td>
                <code>{i.instanceId}</code>
              </td>
              <td>{i.role}</td>
              <td>{i.sessionKey ? `fingerprint ${i.sessionKey}` : '— (signs no sessions)'}</td>
              <td>{i.redisPrefix === null ? '— (no Redis)' : <code>{i.redisPrefix}</code>}</td>
              <td>{formatTime(i.startedAt.toISOString(), timeZone)}</td>
              <td>{formatTime(i.seenAt.toISOString(), timeZone)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

/** A plain table's header row. */
function ColumnHeads({ names }: { names: string[] }) {
  return (
    <thead>
      <tr>
        {names.map((name) => (
          <th key={name} scope="col">
            {name}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** The part of /ops that refreshes itself. */
export function OpsStatusRegion({
  status,
  csrfToken,
  timeZone,
}: {
  status: OpsStatus;
  csrfToken: string;
  /** The viewer's time zone: times are written on that clock. */
  timeZone: string;
}) {
  const peak = Math.max(...status.perMinute, 0);
  return (
    <div id="ops-status" data-refresh-every="5000">
      <Disagreements disagreements={status.disagreements} />
      <dl className="battlecard__facts">
        <dt>Database</dt>
        <dd>{status.database}</dd>
        <dt>Command bus</dt>
        <dd>{status.bus}</dd>
        <dt>Newest event</dt>
        <dd>position {n(status.head)}</dd>
        <dt>Throughput</dt>
        <dd>
          {n(status.eventsLastMinute)} events this minute, {n(status.eventsLastHour)} in the last hour{' '}
          <Sparkline
            values={status.perMinute.map((v) => v / 60)}
            label={`Events per second, each minute of the last hour; peak ${(peak / 60).toFixed(1)}/s`}
          />{' '}
          <span className="field__hint">peak {(peak / 60).toFixed(1)} events/s</span>
        </dd>
        <dt>Changes accepted, not handled yet</dt>
        <dd>{backlog(status.backlog)}</dd>
        <dt>Commands awaiting acknowledgement</dt>
        <dd>{status.pending ?? 'unknown'}</dd>
      </dl>
      {status.pending === undefined ? (
        <p className="field__error" role="alert">
          The command bus did not answer, so the commands awaiting acknowledgement cannot be shown right now,
          and no worker receives new changes: they wait in the inbox until it answers. This page asks again
          every few seconds.
        </p>
      ) : null}
      <h2>Projections</h2>
      {status.heldBack ? (
        <p className="field__error" role="alert">
          {status.heldBack}.
        </p>
      ) : null}
      <ScrollRegion label="Projections">
        <table className="simple-table">
          <ColumnHeads
            names={[
              'Projection',
              'Version',
              'Checkpoint',
              'Head',
              'Behind (events)',
              'Behind (time)',
              'Last batch',
            ]}
          />
          <tbody>
            {status.projections.map((p) => (
              <tr key={p.name}>
                <td>{p.name}</td>
                <td>
                  {p.version}
                  {p.rebuilding ? ' (rebuilding)' : ''}
                  {p.builtByNewer !== null
                    ? ` (built by a newer version, v${p.builtByNewer}: left to it)`
                    : ''}
                </td>
                <td>{n(p.position)}</td>
                <td>{n(status.head)}</td>
                <td>{n(p.lag)}</td>
                <td>{seconds(p.lagSeconds)}</td>
                <td>{p.updatedAt ? formatTime(p.updatedAt.toISOString(), timeZone) : 'never'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
      <h2>Instances</h2>
      {status.instances.length === 0 ? (
        <p className="field__hint">No instance has reported in the last 30 seconds.</p>
      ) : (
        <Instances instances={status.instances} timeZone={timeZone} />
      )}
      <h2>Dead letters</h2>
      {status.deadLetters.length === 0 ? (
        <p className="field__hint">None: every command was handled.</p>
      ) : (
        <>
          {status.deadLetterCount > status.deadLetters.length ? (
            <p className="field__hint" role="status">
              {`The newest ${n(status.deadLetters.length)} of ${n(status.deadLetterCount)} dead letters are listed; retry or discard them to see the older ones.`}
            </p>
          ) : null}
          <ScrollRegion label="Dead letters">
            <table className="simple-table">
              <ColumnHeads names={['Command', 'Error', 'Attempts', 'Actions']} />
              <tbody>
                {status.deadLetters.map((d) => (
                  <tr key={d.id}>
                    <td>
                      <code>{d.envelope?.command.type ?? 'unreadable entry'}</code>
                      {d.envelope ? (
                        <div className="field__hint">
                          by {d.envelope.actor.name}, {formatTime(d.envelope.at, timeZone)}
                        </div>
                      ) : null}
                    </td>
                    <td>{d.error}</td>
                    <td>{d.deliveryCount}</td>
                    <td>
                      {status.unfinished[d.id] ? (
                        <p className="field__hint" role="status">
                          {`${status.unfinished[d.id] === 'retry' ? 'Retry' : 'Discard'} recorded, not carried out. Either button finishes it.`}
                        </p>
                      ) : null}
                      <DeadLetterActions letter={d} csrfToken={csrfToken} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
        </>
      )}
    </div>
  );
}

export function OpsPage({ page, status }: { page: PageContext; status: OpsStatus }) {
  return (
    <Layout page={page} title="Operations">
      <h1>Operations</h1>
      <OpsStatusRegion status={status} csrfToken={page.csrfToken} timeZone={page.timeZone} />
    </Layout>
  );
}
