import { Gauge, type Registry } from 'prom-client';
import { projectionLags } from '#projections/lag.ts';
import type { AppDeps } from './app-deps.server.ts';

/**
 * The figures /metrics reads from the database and the bus at each scrape: projection lag, the changes
 * accepted and not handled yet (the bus's pending count misses those no worker has read and those the bus
 * lost in a Redis restart without persistence), and the dead letters. A figure that cannot be read
 * (database or bus down) is unknown in that scrape (left out, or NaN), not repeated from the last one:
 * a stale "lag 0" reads as healthy.
 */
export function scrapeGauges(
  deps: Pick<AppDeps, 'db' | 'inbox' | 'deadLetters'>,
  registry: Registry,
): () => Promise<void> {
  const gauge = (name: string, help: string, labelNames: string[] = []) =>
    new Gauge({ name, help, labelNames, registers: [registry] });
  const lagEvents = gauge(
    'rivals_projection_lag_events',
    'Events committed after the projection checkpoint',
    ['projection'],
  );
  const lagSeconds = gauge(
    'rivals_projection_lag_seconds',
    'Age of the oldest event the projection has not applied yet',
    ['projection'],
  );
  const heldBack = gauge(
    'rivals_projections_held_back_seconds',
    'How long committed events have waited behind a transaction left open in the Postgres cluster (0: none wait); every projection of every instance waits for it (/ops names it)',
  );
  const unhandled = gauge('rivals_commands_unhandled', 'Changes accepted (in the inbox) and not handled yet');
  const unhandledOldest = gauge(
    'rivals_commands_unhandled_oldest_seconds',
    'How long the oldest change accepted and not handled yet has waited',
  );
  const deadLetters = gauge(
    'rivals_dead_letters',
    'Commands the workers gave up on, waiting for an operator (Retry or Discard on /ops)',
  );

  /**
   * Runs `read`, which sets its gauges; when it fails, `unknown` says so for this scrape: a labelled
   * series is removed, a single figure becomes NaN (a label-less gauge cannot be left out).
   */
  const refresh = (read: () => Promise<void>, unknown: () => void) => read().catch(unknown);
  return async () => {
    await Promise.all([
      refresh(
        async () => {
          const lags = await projectionLags(deps.db.pool);
          for (const lag of lags) {
            lagEvents.set({ projection: lag.name }, lag.lagEvents);
            lagSeconds.set({ projection: lag.name }, lag.lagSeconds);
          }
          heldBack.set(Math.max(0, ...lags.map((l) => l.heldBackSeconds)));
        },
        () => {
          lagEvents.reset();
          lagSeconds.reset();
          heldBack.set(Number.NaN);
        },
      ),
      refresh(
        async () => {
          const backlog = await deps.inbox.backlog();
          unhandled.set(backlog.count);
          unhandledOldest.set(backlog.oldestSeconds);
        },
        () => {
          unhandled.set(Number.NaN);
          unhandledOldest.set(Number.NaN);
        },
      ),
      refresh(
        async () => deadLetters.set(await deps.deadLetters.count()),
        () => deadLetters.set(Number.NaN),
      ),
    ]);
  };
}
