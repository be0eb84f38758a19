/**
 * Prometheus metrics, on a registry of our own (never the global one). The controller, work queue and REST
 * client series carry controller-runtime's and client-go's names, labels and buckets, so the dashboards and
 * alerts written for kubebuilder operators read ours (docs/metrics.md lists every series).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { SANDBOX, SESSION_REFERENCE } from '../../api/names.ts';
import { EVIDENCE, VERDICTS } from '../../api/sandbox.ts';
import type { QueueObserver } from '../../runtime/queue.ts';
import type { RunnerObserver } from '../../runtime/runner.ts';

export const CONTROLLER = 'sandbox';

// controller-runtime's reconcile_time_seconds buckets (pkg/internal/controller/metrics).
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5,
  1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
// client-go's workqueue buckets: 10 ns to 10 s, by factors of ten.
const QUEUE_BUCKETS = Array.from({ length: 10 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)));
// component-base's rest_client_request_duration_seconds buckets.
const REST_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

const QUEUE_LABELS = { name: CONTROLLER, controller: CONTROLLER };
const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);

const LEGACY_OUTCOMES = ['Complete', 'Foreign', 'Incomplete', 'Unavailable'] as const;
const WATCHED = [SANDBOX.plural, SESSION_REFERENCE.plural, 'pods'] as const;

export const RECONCILE_RESULTS = ['success', 'error', 'requeue', 'requeue_after'] as const;

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const controller = ['controller'] as const;
  const queue = ['name', 'controller'] as const;
  // Start times (Date.now()) of the keys being reconciled; the manager points this at its work queue.
  const inFlight = { since: (): readonly number[] => [] };
  // The cache's object counts; the manager points this at its store.
  const cache = { counts: () => ({ sandboxes: 0, references: 0, pods: 0 }) };
  const secondsInFlight = () => {
    const now = Date.now();
    return inFlight.since().map((since) => Math.max(0, (now - since) / 1000));
  };
  const metrics = {
    registry,
    inFlight,
    cache,
    reconcileTotal: new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller, by result.',
      labelNames: ['controller', 'result'],
      registers,
    }),
    reconcileErrors: new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller.',
      labelNames: controller,
      registers,
    }),
    terminalErrors: new Counter({
      name: 'controller_runtime_terminal_reconcile_errors_total',
      help: 'Total number of terminal reconciliation errors per controller (not retried).',
      labelNames: controller,
      registers,
    }),
    panics: new Counter({
      name: 'controller_runtime_reconcile_panics_total',
      help: 'Total number of reconciliations that failed with a programming error (TypeError, RangeError, ...).',
      labelNames: controller,
      registers,
    }),
    reconcileSeconds: new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller.',
      labelNames: controller,
      buckets: RECONCILE_BUCKETS,
      registers,
    }),
    activeWorkers: new Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller.',
      labelNames: controller,
      registers,
    }),
    maxWorkers: new Gauge({
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller.',
      labelNames: controller,
      registers,
    }),
    queueDepth: new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue.',
      labelNames: queue,
      registers,
    }),
    queueAdds: new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue.',
      labelNames: queue,
      registers,
    }),
    queueLatency: new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested.',
      labelNames: queue,
      buckets: QUEUE_BUCKETS,
      registers,
    }),
    workDuration: new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes.',
      labelNames: queue,
      buckets: QUEUE_BUCKETS,
      registers,
    }),
    unfinishedWork: new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help: 'How many seconds of work has been done that is in progress and not yet observed by work_duration.',
      labelNames: queue,
      registers,
      // client-go refreshes the two in-flight gauges on a ticker; we do it on every scrape.
      collect() {
        this.set(QUEUE_LABELS, sum(secondsInFlight()));
      },
    }),
    longestRunning: new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labelNames: queue,
      registers,
      collect() {
        this.set(QUEUE_LABELS, Math.max(0, ...secondsInFlight()));
      },
    }),
    queueRetries: new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue.',
      labelNames: queue,
      registers,
    }),
    restRequests: new Counter({
      name: 'rest_client_requests_total',
      help: 'Number of HTTP requests to the API server, partitioned by status code, method, and host.',
      labelNames: ['code', 'method', 'host'],
      registers,
    }),
    restLatency: new Histogram({
      name: 'rest_client_request_duration_seconds',
      help: 'Request latency in seconds to the API server, by verb and host.',
      labelNames: ['verb', 'host'],
      buckets: REST_BUCKETS,
      registers,
    }),
    decisions: new Counter({
      name: 'sandbox_operator_decisions_total',
      help: 'Exclusivity decisions by verdict and evidence.',
      labelNames: ['verdict', 'evidence'],
      registers,
    }),
    reconciliations: new Counter({
      name: 'sandbox_operator_legacy_reconciliations_total',
      help: 'Legacy reconciliation walks by outcome.',
      labelNames: ['outcome'],
      registers,
    }),
    watchRestarts: new Counter({
      name: 'sandbox_operator_watch_restarts_total',
      help: 'List/watch restarts by resource and reason (gone, error).',
      labelNames: ['resource', 'reason'],
      registers,
    }),
    leader: new Gauge({
      name: 'leader_election_master_status',
      help: '1 while this replica leads, 0 otherwise.',
      labelNames: ['name'],
      registers,
    }),
    cached: new Gauge({
      name: 'sandbox_operator_cached_objects',
      help: 'Objects in the cache by kind.',
      labelNames: ['kind'],
      registers,
      collect() {
        const counts = cache.counts();
        this.set({ kind: SANDBOX.kind }, counts.sandboxes);
        this.set({ kind: SESSION_REFERENCE.kind }, counts.references);
        this.set({ kind: 'Pod' }, counts.pods);
      },
    }),
  };
  // Series that exist before their first event, so rate() and absent() see them from the first scrape.
  const labels = { controller: CONTROLLER };
  const queueLabels = QUEUE_LABELS;
  for (const result of RECONCILE_RESULTS) metrics.reconcileTotal.inc({ ...labels, result }, 0);
  for (const counter of [metrics.reconcileErrors, metrics.terminalErrors, metrics.panics])
    counter.inc(labels, 0);
  metrics.activeWorkers.set(labels, 0);
  metrics.maxWorkers.set(labels, 0);
  metrics.queueDepth.set(queueLabels, 0);
  metrics.queueAdds.inc(queueLabels, 0);
  metrics.queueRetries.inc(queueLabels, 0);
  for (const verdict of VERDICTS)
    for (const evidence of EVIDENCE) metrics.decisions.inc({ verdict, evidence }, 0);
  for (const outcome of LEGACY_OUTCOMES) metrics.reconciliations.inc({ outcome }, 0);
  for (const resource of WATCHED)
    for (const reason of ['gone', 'error']) metrics.watchRestarts.inc({ resource, reason }, 0);
  return metrics;
}

export type Metrics = ReturnType<typeof createMetrics>;

/** The work queue's observer: adds, retries, depth and the two latency histograms. */
export function queueMetrics(metrics: Metrics, controller: string = CONTROLLER): QueueObserver {
  const labels = controller === CONTROLLER ? QUEUE_LABELS : { name: controller, controller };
  return {
    onAdd: () => metrics.queueAdds.inc(labels),
    onRetry: () => metrics.queueRetries.inc(labels),
    onDepth: (depth) => metrics.queueDepth.set(labels, depth),
    onGet: (waitedSeconds) => metrics.queueLatency.observe(labels, waitedSeconds),
    onDone: (workedSeconds) => metrics.workDuration.observe(labels, workedSeconds),
  };
}

/** The runner's observer: results, errors by class, durations and busy workers. */
export function reconcileMetrics(metrics: Metrics, controller: string = CONTROLLER): RunnerObserver {
  const labels = { controller };
  return {
    onResult: (result, seconds) => {
      metrics.reconcileTotal.inc({ ...labels, result });
      metrics.reconcileSeconds.observe(labels, seconds);
      if (result === 'error') metrics.reconcileErrors.inc(labels);
    },
    onPanic: () => metrics.panics.inc(labels),
    onActiveWorkers: (active) => metrics.activeWorkers.set(labels, active),
  };
}
