import { isRefusedWrite, unavailableReason } from './db/database.ts';
import type { WriteReport } from './db/write-report.ts';

/** Why a dependency is not ok: `state` is public (/readyz), `detail` for the operators' log only. */
export interface Problem {
  state: string;
  detail: string;
}

/**
 * What this process cannot do right now, by dependency: `/readyz` is unready while anything is listed,
 * and `/ops` and `/metrics` show why. Components report both ways (problem and recovery); a problem
 * known only from the last attempt (a write refused for a full disk) may be reported for a while
 * (`forMs`), after which it is no longer known and lapses. A dependency several components report on
 * (each a `source`) has a problem while any of them has one, and each clears only its own.
 */
export class Readiness {
  private readonly problems = new Map<string, Map<string, Problem & { until: number }>>();
  private readonly reported = new Set<string>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * `state` is what /readyz shows (default "unavailable"); `forMs` how long it holds (default: until
   * cleared); `source` the component reporting, when several report on one dependency (default: one).
   */
  report(
    dependency: string,
    problem: unknown,
    options: { state?: string; forMs?: number; source?: string } = {},
  ): void {
    this.reported.add(dependency);
    const source = options.source ?? '';
    if (problem === undefined) return void this.problems.get(dependency)?.delete(source);
    let bySource = this.problems.get(dependency);
    if (!bySource) this.problems.set(dependency, (bySource = new Map<string, Problem & { until: number }>()));
    bySource.set(source, {
      state: options.state ?? 'unavailable',
      detail:
        problem instanceof Error ? problem.message : typeof problem === 'string' ? problem : 'unavailable',
      until: this.now() + (options.forMs ?? Number.POSITIVE_INFINITY),
    });
  }

  /** Each dependency with a problem; of several sources' problems, the one reported last. */
  current(): Record<string, Problem> {
    const now = this.now();
    const current: Record<string, Problem> = {};
    for (const [dependency, bySource] of this.problems) {
      let latest: (Problem & { until: number }) | undefined;
      for (const problem of bySource.values())
        if (problem.until > now && (!latest || problem.until >= latest.until)) latest = problem;
      if (latest) current[dependency] = { state: latest.state, detail: latest.detail };
    }
    return current;
  }

  /** Every dependency ever reported, true while it has a problem: a gauge says "fine" too. */
  unavailable(): Record<string, boolean> {
    const current = this.current();
    return Object.fromEntries([...this.reported].map((dependency) => [dependency, dependency in current]));
  }
}

/** The dependency every database write reports to. */
export const DATABASE_WRITES = 'database (writes)';

/**
 * How long a refused write keeps this process unready without a new refusal. Nothing cheap says whether
 * the next write fits: a probe that writes costs a write per probe, and may fit in a page that still has
 * room while other writes do not. So the last write's outcome decides: one that succeeds clears it at
 * once, and without writes it lapses, since a load balancer that took the instance out of rotation sends
 * none to clear it.
 */
export const WRITE_REFUSED_READINESS_MS = 30_000;

/**
 * The `WriteReport` of one path that writes (`source`: "sessions", "projections"…). A write the database
 * refused for a reason of its own (`isRefusedWrite`: its disk full, its files gone) makes the process
 * unready, saying why ("unavailable: the server's disk is full"), until the same path stores again or
 * for WRITE_REFUSED_READINESS_MS without another refusal. Only the same path's success clears it: a
 * heartbeat row that fits in a page with room says nothing of the projection whose table could not grow.
 * Any other error (a constraint, a conflict, a lost connection) neither sets nor clears it.
 */
export function writeReporter(readiness: Readiness, source: string): WriteReport {
  return (error) => {
    if (error === undefined) return readiness.report(DATABASE_WRITES, undefined, { source });
    if (!isRefusedWrite(error)) return;
    const message = error instanceof Error ? error.message : unavailableReason(error);
    readiness.report(DATABASE_WRITES, `${source}: ${message}`, {
      source,
      state: `unavailable: ${unavailableReason(error)}`,
      forMs: WRITE_REFUSED_READINESS_MS,
    });
  };
}
