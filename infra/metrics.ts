import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { sharedSettings, type Disagreement } from './instances.ts';

export interface Metrics {
  registry: Registry;
  httpRequests: Histogram<'method' | 'route' | 'status'>;
  commands: Counter<'type' | 'status'>;
  /** 1 while the named dependency keeps this process from doing its job (see /readyz). */
  unavailable: Gauge<'dependency'>;
  /** Sets `rivals_instance_settings_differ` from the instance registry's last check. */
  reportDisagreements(disagreements: readonly Disagreement[]): void;
}

/** A registry per process (not prom-client's global one), so tests can create several apps. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const differ = new Gauge({
    name: 'rivals_instance_settings_differ',
    help: '1 while live instances run with different values of the setting (see /ops)',
    labelNames: ['setting'],
    registers: [registry],
  });
  return {
    registry,
    reportDisagreements(disagreements) {
      for (const setting of sharedSettings)
        differ.set({ setting }, disagreements.some((d) => d.setting === setting) ? 1 : 0);
    },
    httpRequests: new Histogram({
      name: 'rivals_http_request_duration_seconds',
      help: 'HTTP request duration',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    commands: new Counter({
      name: 'rivals_commands_total',
      help: 'Commands handled, by type and outcome',
      labelNames: ['type', 'status'],
      registers: [registry],
    }),
    unavailable: new Gauge({
      name: 'rivals_dependency_unavailable',
      help: '1 while a dependency keeps this process from doing its job',
      labelNames: ['dependency'],
      registers: [registry],
    }),
  };
}
