/**
 * What this process cannot do right now, by dependency: `/readyz` is unready while anything is listed,
 * and `/ops` and `/metrics` show why. Components report both ways (problem and recovery).
 */
export class Readiness {
  private readonly problems = new Map<string, string>();

  report(dependency: string, problem: unknown): void {
    if (problem === undefined) this.problems.delete(dependency);
    else
      this.problems.set(
        dependency,
        problem instanceof Error ? problem.message : typeof problem === 'string' ? problem : 'unavailable',
      );
  }

  current(): Record<string, string> {
    return Object.fromEntries(this.problems);
  }
}
