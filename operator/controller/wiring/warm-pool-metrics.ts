/**
 * The warm pools' series (docs/metrics.md): per pool, the sandboxes wanted, ready and pending, and how many
 * it made; and the pool controller's own controller-runtime and workqueue series, under controller
 * `sandboxwarmpool` beside `sandbox`.
 */
import { Counter, Gauge } from 'prom-client';
import type { QueueObserver } from '../../runtime/queue.ts';
import type { RunnerObserver } from '../../runtime/runner.ts';
import type { WarmPoolObserver } from '../warm-pool/turn.ts';
import { RECONCILE_RESULTS, type Metrics } from './metrics.ts';

export const WARM_POOL_CONTROLLER = 'sandboxwarmpool';
const QUEUE_LABELS = { name: WARM_POOL_CONTROLLER, controller: WARM_POOL_CONTROLLER };
const labels = { controller: WARM_POOL_CONTROLLER };

const poolLabels = (key: string) => {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), pool: key.slice(slash + 1) };
};

export function warmPoolMetrics(metrics: Metrics): {
  readonly pools: WarmPoolObserver;
  readonly queue: QueueObserver;
  readonly runner: RunnerObserver;
} {
  const registers = [metrics.registry];
  const byPool = ['namespace', 'pool'] as const;
  const gauge = (name: string, help: string) =>
    new Gauge({ name: `sandbox_operator_warm_pool_${name}`, help, labelNames: byPool, registers });
  const desired = gauge('desired_sandboxes', 'Unclaimed sandboxes a warm pool wants (spec.replicas).');
  const ready = gauge('ready_sandboxes', 'Unclaimed sandboxes of a warm pool that are Ready.');
  const pending = gauge('pending_sandboxes', 'Sandboxes of a warm pool being made or not Ready yet.');
  const replenished = new Counter({
    name: 'sandbox_operator_warm_pool_replenished_sandboxes_total',
    help: 'Sandboxes a warm pool made, to reach spec.replicas or replace stale ones.',
    labelNames: byPool,
    registers,
  });
  for (const result of RECONCILE_RESULTS) metrics.reconcileTotal.inc({ ...labels, result }, 0);
  for (const counter of [metrics.reconcileErrors, metrics.terminalErrors, metrics.panics])
    counter.inc(labels, 0);
  metrics.queueDepth.set(QUEUE_LABELS, 0);
  metrics.queueAdds.inc(QUEUE_LABELS, 0);
  metrics.queueRetries.inc(QUEUE_LABELS, 0);
  return {
    pools: {
      onCounts: (key, wanted, counts) => {
        const pool = poolLabels(key);
        desired.set(pool, wanted);
        ready.set(pool, counts.ready);
        pending.set(pool, counts.pending);
      },
      onForget: (key) => {
        const pool = poolLabels(key);
        for (const series of [desired, ready, pending]) series.remove(pool);
      },
      onReplenish: (key, made) => replenished.inc(poolLabels(key), made),
    },
    queue: {
      onAdd: () => metrics.queueAdds.inc(QUEUE_LABELS),
      onRetry: () => metrics.queueRetries.inc(QUEUE_LABELS),
      onDepth: (depth) => metrics.queueDepth.set(QUEUE_LABELS, depth),
      onGet: (waitedSeconds) => metrics.queueLatency.observe(QUEUE_LABELS, waitedSeconds),
      onDone: (workedSeconds) => metrics.workDuration.observe(QUEUE_LABELS, workedSeconds),
    },
    runner: {
      onResult: (result, seconds) => {
        metrics.reconcileTotal.inc({ ...labels, result });
        metrics.reconcileSeconds.observe(labels, seconds);
        if (result === 'error') metrics.reconcileErrors.inc(labels);
      },
      onPanic: () => metrics.panics.inc(labels),
      onActiveWorkers: (active) => metrics.activeWorkers.set(labels, active),
    },
  };
}
