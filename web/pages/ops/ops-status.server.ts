import { findDisagreements, liveInstances } from '#infra/instances.ts';
import { heldBackNotice } from '#projections/held-back-by.ts';
import { projectionLags } from '#projections/lag.ts';
import { recordedLetterActions } from '#services/operations/dead-letter-actions.ts';
import type { AppDeps } from '../../app-deps.server.ts';
import type { OpsStatus } from './ops.page.tsx';

/** Dead letters listed on /ops, newest first; the page says how many more there are. */
const DEAD_LETTERS_LISTED = 50;

/**
 * The commands awaiting acknowledgement on the bus, or undefined when the bus does not answer (Redis down
 * or restarting): that is when an operator most needs the rest of the page, so it is shown without this.
 */
async function pendingOnBus(deps: AppDeps): Promise<number | undefined> {
  try {
    return await deps.bus.pendingCount();
  } catch (error) {
    deps.log.warn({ err: error }, '/ops: the command bus did not answer');
    return undefined;
  }
}

/** Everything /ops shows, read fresh on every request (the page refreshes itself every few seconds). */
export async function loadOpsStatus(deps: AppDeps): Promise<OpsStatus> {
  const pool = deps.db.pool;
  const lags = await projectionLags(pool);
  // Events per minute over the last hour, oldest first, zeros included (the sparkline).
  const { rows: minutes } = await pool.query<{ n: number }>(
    `SELECT count(e.position)::int AS n
     FROM generate_series(0, 59) AS m(ago)
     LEFT JOIN events e ON e.recorded_at >= date_trunc('minute', now()) - make_interval(mins => m.ago)
                       AND e.recorded_at <  date_trunc('minute', now()) - make_interval(mins => m.ago - 1)
     GROUP BY m.ago ORDER BY m.ago DESC`,
  );
  const perMinute = minutes.map((m) => m.n);
  const [deadLetters, deadLetterCount, pending, instances] = await Promise.all([
    deps.deadLetters.list(DEAD_LETTERS_LISTED),
    deps.deadLetters.count(),
    pendingOnBus(deps),
    liveInstances(pool),
  ]);
  return {
    head: lags[0]?.head ?? (await deps.store.headPosition()),
    projections: lags.map((l) => ({
      name: l.name,
      version: l.version,
      // An older build is rebuilt; a newer one (a rolling upgrade) is left to the newer instances.
      rebuilding: l.builtVersion !== null && l.builtVersion < l.version,
      builtByNewer: l.builtVersion !== null && l.builtVersion > l.version ? l.builtVersion : null,
      position: l.position,
      lag: l.lagEvents,
      lagSeconds: l.lagSeconds,
      updatedAt: l.updatedAt,
    })),
    heldBack: await heldBackNotice(deps.db, lags, deps.config.READY_MAX_LAG_SECONDS),
    pending,
    // The inbox, not the bus: it holds what the bus lost and what no worker has read.
    backlog: await deps.inbox.backlog(),
    deadLetters,
    deadLetterCount,
    unfinished: Object.fromEntries(await recordedLetterActions(pool, deadLetters)),
    eventsLastMinute: perMinute.at(-1) ?? 0,
    eventsLastHour: perMinute.reduce((a, b) => a + b, 0),
    perMinute,
    instances,
    disagreements: findDisagreements(instances),
    database: deps.db.describe,
    bus: deps.redis ? 'Redis Streams' : 'in-process',
  };
}
