/**
 * Prometheus metrics, on a registry of our own (never the global one). Names follow controller-runtime's so
 * existing dashboards work: controller_runtime_reconcile_*, workqueue_*, leader_election_master_status.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export const CONTROLLER = 'sandbox';

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const labels = { controller: CONTROLLER };
  const metrics = {
    registry,
    reconcileTotal: new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Reconciles by result (success, error, requeue_after).',
      labelNames: ['controller', 'result'],
      registers: [registry],
    }),
    reconcileSeconds: new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Reconcile durations by result.',
      labelNames: ['controller', 'result'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60],
      registers: [registry],
    }),
    activeWorkers: new Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Workers reconciling now.',
      labelNames: ['controller'],
      registers: [registry],
    }),
    maxWorkers: new Gauge({
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Configured workers.',
      labelNames: ['controller'],
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'workqueue_depth',
      help: 'Keys waiting in the work queue.',
      labelNames: ['name'],
      registers: [registry],
    }),
    queueAdds: new Counter({
      name: 'workqueue_adds_total',
      help: 'Adds to the work queue.',
      labelNames: ['name'],
      registers: [registry],
    }),
    queueRetries: new Counter({
      name: 'workqueue_retries_total',
      help: 'Rate-limited retries.',
      labelNames: ['name'],
      registers: [registry],
    }),
    decisions: new Counter({
      name: 'sandbox_operator_decisions_total',
      help: 'Exclusivity decisions by verdict and evidence.',
      labelNames: ['verdict', 'evidence'],
      registers: [registry],
    }),
    reconciliations: new Counter({
      name: 'sandbox_operator_legacy_reconciliations_total',
      help: 'Legacy reconciliation walks by outcome.',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    watchRestarts: new Counter({
      name: 'sandbox_operator_watch_restarts_total',
      help: 'List/watch restarts by resource and reason (gone, error).',
      labelNames: ['resource', 'reason'],
      registers: [registry],
    }),
    leader: new Gauge({
      name: 'leader_election_master_status',
      help: '1 while this replica leads.',
      labelNames: ['name'],
      registers: [registry],
    }),
    cached: new Gauge({
      name: 'sandbox_operator_cached_objects',
      help: 'Objects in the cache by kind.',
      labelNames: ['kind'],
      registers: [registry],
    }),
  };
  metrics.maxWorkers.set(labels, 0);
  return metrics;
}

export type Metrics = ReturnType<typeof createMetrics>;
