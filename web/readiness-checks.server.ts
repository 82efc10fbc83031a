import { describeHeldBack, oldestOpenTransactions } from '#projections/held-back-by.ts';
import { projectionLags, type ProjectionLag } from '#projections/lag.ts';
import type { AppDeps } from './app-deps.server.ts';

type ReadinessDeps = Pick<AppDeps, 'db' | 'redis' | 'readiness' | 'config' | 'log'>;

/** One dependency's state: what anyone may read (`state`), and why, for the operators' log only. */
export interface Check {
  state: string;
  detail?: string;
  /**
   * How far or how long, logged with the problem but not compared: they change at every probe, and the
   * log says a problem again only when its state or detail changes.
   */
  figures?: string;
  /**
   * Said, logged and counted, but no reason to take this instance out of rotation: every instance has
   * it, so all would go (decision 0022).
   */
  advisory?: boolean;
}

/** Whether a check lets the instance take traffic. */
export const passes = (check: Check): boolean => check.state === 'ok' || check.advisory === true;

const CHECK_TIMEOUT_MS = 2_000;

const withTimeout = <T>(promise: Promise<T>) =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS),
    ),
  ]);

const failed = (error: unknown): Check => ({
  state: 'unavailable',
  detail: error instanceof Error ? error.message : String(error),
});

/**
 * What `/readyz` reports, by dependency: the database, Redis when configured, projection lag, and what
 * background work reported. A driver's error text can name hosts, users and databases, so it stays in
 * `detail` (logged), and the public `state` only says "ok", "unavailable" or which projections are
 * behind (docs/decisions/0008).
 */
export async function readinessChecks(deps: ReadinessDeps): Promise<Record<string, Check>> {
  const checks: Record<string, Check> = {};
  const database = async () => {
    await deps.db.pool.query('SELECT 1');
    await deps.db.checkStorage?.();
  };
  checks.database = await withTimeout(database()).then(() => ({ state: 'ok' }), failed);
  if (deps.redis) checks.redis = await withTimeout(deps.redis.ping()).then(() => ({ state: 'ok' }), failed);
  checks.projections =
    checks.database.state === 'ok'
      ? await projectionsCheck(deps)
      : { state: 'unknown', detail: 'the database is unavailable' };
  Object.assign(checks, deps.readiness?.current());
  return checks;
}

/**
 * A projection far behind the events it could read serves stale pages: take this instance out of
 * rotation. One being rebuilt for a new code version keeps serving its old tables and does not count.
 * Events waiting only behind a transaction left open in the Postgres cluster hold every projection of
 * every instance back alike: that is said ("held back") and logged with the transaction, but the instance
 * stays ready (decision 0022).
 */
async function projectionsCheck(deps: ReadinessDeps): Promise<Check> {
  const { READY_MAX_LAG_EVENTS: maxEvents, READY_MAX_LAG_SECONDS: maxSeconds } = deps.config;
  try {
    const lags = (await withTimeout(projectionLags(deps.db.pool))).filter(
      (l) => l.builtVersion === l.version,
    );
    const overEvents = lags.filter((l) => l.readableEvents > maxEvents);
    const overSeconds = lags.filter((l) => l.readableSeconds > maxSeconds);
    const behind = lags.filter((l) => overEvents.includes(l) || overSeconds.includes(l));
    if (behind.length > 0) {
      const limits = [
        overEvents.length > 0 && 'READY_MAX_LAG_EVENTS',
        overSeconds.length > 0 && 'READY_MAX_LAG_SECONDS',
      ].filter(Boolean);
      return {
        state: `behind: ${behind.map((l) => l.name).join(', ')} (limit ${limits.join(', ')})`,
        detail: `limits ${maxEvents} events, ${maxSeconds} s`,
        figures: behind.map(figures).join(', '),
      };
    }
    if (!lags.some((l) => l.heldBackSeconds > maxSeconds)) return { state: 'ok' };
    // The transactions without their ages, which are figures: a new line means another one holds the log.
    const oldest = await withTimeout(oldestOpenTransactions(deps.db));
    const named = describeHeldBack(oldest.map((t) => ({ ...t, seconds: null })));
    const waited = Math.max(...lags.map((l) => l.heldBackSeconds));
    return {
      state: 'held back: a transaction left open in the database (see /ops)',
      detail: `every projection of every instance waits: ${named ?? 'no open transaction found any more'}`,
      figures: `changes have waited ${Math.round(waited)} s; ${oldest.map((t) => `pid ${t.pid} open ${t.seconds ?? '?'} s`).join(', ')}`,
      advisory: true,
    };
  } catch (error) {
    return { ...failed(error), state: 'unknown' };
  }
}

const figures = (l: ProjectionLag) => `${l.name} by ${l.lagEvents} events (${Math.round(l.lagSeconds)} s)`;

/**
 * Logs a dependency's problem when it starts or changes, and its recovery: probes call `/readyz`
 * every few seconds, and the log should say what happened, not repeat it.
 */
export function readinessLogger(log: AppDeps['log']): (checks: Record<string, Check>) => void {
  const last = new Map<string, string>();
  return (checks) => {
    for (const [dependency, check] of Object.entries(checks)) {
      const said = last.get(dependency);
      const now = check.state === 'ok' ? undefined : `${check.state}: ${check.detail ?? ''}`;
      if (now === said) continue;
      if (now === undefined) {
        last.delete(dependency);
        log.info({ dependency }, 'readiness: dependency ok again');
      } else {
        last.set(dependency, now);
        log.warn(
          { dependency, state: check.state, detail: check.detail, figures: check.figures },
          check.advisory
            ? 'readiness: dependency not ok; this instance stays ready (every instance has it)'
            : 'readiness: dependency not ok',
        );
      }
    }
    for (const dependency of [...last.keys()])
      if (!(dependency in checks)) {
        last.delete(dependency);
        log.info({ dependency }, 'readiness: dependency ok again');
      }
  };
}
