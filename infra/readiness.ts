/** Why a dependency is not ok: `state` is public (/readyz), `detail` for the operators' log only. */
export interface Problem {
  state: string;
  detail: string;
}

/**
 * What this process cannot do right now, by dependency: `/readyz` is unready while anything is listed,
 * and `/ops` and `/metrics` show why. Components report both ways (problem and recovery); a problem
 * known only from the last attempt (a write refused for a full disk) may be reported for a while
 * (`forMs`), after which it is no longer known and lapses.
 */
export class Readiness {
  private readonly problems = new Map<string, Problem & { until: number }>();
  private readonly reported = new Set<string>();

  constructor(private readonly now: () => number = Date.now) {}

  /** `state` is what /readyz shows (default "unavailable"); `forMs` how long it holds (default: until cleared). */
  report(dependency: string, problem: unknown, options: { state?: string; forMs?: number } = {}): void {
    this.reported.add(dependency);
    if (problem === undefined) this.problems.delete(dependency);
    else
      this.problems.set(dependency, {
        state: options.state ?? 'unavailable',
        detail:
          problem instanceof Error ? problem.message : typeof problem === 'string' ? problem : 'unavailable',
        until: this.now() + (options.forMs ?? Number.POSITIVE_INFINITY),
      });
  }

  current(): Record<string, Problem> {
    const now = this.now();
    const current: Record<string, Problem> = {};
    for (const [dependency, { state, detail, until }] of this.problems)
      if (until > now) current[dependency] = { state, detail };
    return current;
  }

  /** Every dependency ever reported, true while it has a problem: a gauge says "fine" too. */
  unavailable(): Record<string, boolean> {
    const current = this.current();
    return Object.fromEntries([...this.reported].map((dependency) => [dependency, dependency in current]));
  }
}
