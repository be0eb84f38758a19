/**
 * The metrics endpoint of a running operator serves controller-runtime's, client-go's and our own series with
 * their labels, and everything the kubebuilder Grafana dashboards query.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics, RECONCILE_RESULTS } from '../../../operator/controller/wiring/metrics.ts';
import { registerStateGauges } from '../../../operator/controller/wiring/state-metrics.ts';
import { testNamespace } from '../../harness/kube.ts';
import {
  parseExposition,
  registrySeriesNames,
  series,
  seriesNames,
  type Sample,
} from '../../harness/prometheus-text.ts';
import { KUBEBUILDER_DASHBOARD_QUERIES } from '../../fixtures/kubebuilder-dashboards.ts';
import { createSandbox, deleteSandbox, untilSandbox, sandboxGone } from './fixtures.ts';
import { grantOperatorRbac, startOperator, type RunningOperator } from './operator.ts';

const namespace = testNamespace('metrics');
let operator: RunningOperator;
let samples: Sample[];

const controller = { controller: 'sandbox' };
const queue = { name: 'sandbox', controller: 'sandbox' };

beforeAll(async () => {
  await grantOperatorRbac();
  operator = startOperator(namespace);
  await createSandbox(namespace, 'scraped');
  await untilSandbox(
    namespace,
    'scraped',
    'sandbox running',
    (sandbox) => sandbox.status?.phase === 'Running',
  );
  await deleteSandbox(namespace, 'scraped');
  await sandboxGone(namespace, 'scraped', 60_000);
  const port = await operator.port;
  samples = parseExposition(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
});
afterAll(async () => {
  await operator.stop();
});

const value = (name: string, labels: Record<string, string | true>) =>
  series(samples, name, labels).reduce((sum, s) => sum + s.value, 0);

describe('the metrics endpoint', () => {
  it("serves controller-runtime's reconcile series with their labels", () => {
    for (const result of RECONCILE_RESULTS)
      expect(series(samples, 'controller_runtime_reconcile_total', { ...controller, result })).toHaveLength(
        1,
      );
    expect(value('controller_runtime_reconcile_total', { ...controller, result: 'success' })).toBeGreaterThan(
      0,
    );
    for (const name of [
      'controller_runtime_reconcile_errors_total',
      'controller_runtime_terminal_reconcile_errors_total',
      'controller_runtime_reconcile_panics_total',
      'controller_runtime_active_workers',
    ])
      expect(series(samples, name, controller), name).toHaveLength(1);
    expect(value('controller_runtime_max_concurrent_reconciles', controller)).toBe(8);
    expect(value('controller_runtime_reconcile_time_seconds_count', controller)).toBeGreaterThan(0);
    expect(
      series(samples, 'controller_runtime_reconcile_time_seconds_bucket', { ...controller, le: '60' }),
    ).toHaveLength(1);
  });

  it('serves all seven workqueue series labelled {name, controller}', () => {
    for (const name of [
      'workqueue_depth',
      'workqueue_adds_total',
      'workqueue_queue_duration_seconds_count',
      'workqueue_work_duration_seconds_count',
      'workqueue_unfinished_work_seconds',
      'workqueue_longest_running_processor_seconds',
      'workqueue_retries_total',
    ])
      expect(series(samples, name, queue), name).toHaveLength(1);
    expect(value('workqueue_adds_total', queue)).toBeGreaterThan(0);
    expect(value('workqueue_queue_duration_seconds_count', queue)).toBeGreaterThan(0);
    expect(value('workqueue_work_duration_seconds_count', queue)).toBeGreaterThan(0);
  });

  it("counts the API calls as client-go's rest_client series, with code, method and host", () => {
    const created = series(samples, 'rest_client_requests_total', {
      code: '201',
      method: 'POST',
      host: true,
    });
    expect(created.length, 'a pod create').toBeGreaterThan(0);
    expect(value('rest_client_requests_total', { code: '200', method: 'GET', host: true })).toBeGreaterThan(
      0,
    );
    expect(created[0]!.labels['host']).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(
      value('rest_client_request_duration_seconds_count', { verb: 'PATCH', host: true }),
    ).toBeGreaterThan(0);
  });

  it('serves the state gauges', () => {
    for (const phase of ['Pending', 'Running', 'Terminating', 'Blocked', 'Unknown'])
      expect(series(samples, 'sandbox_operator_sandboxes', { phase }), phase).toHaveLength(1);
    for (const name of [
      'sandbox_operator_deletions_blocked',
      'sandbox_operator_oldest_blocked_deletion_seconds',
      'sandbox_operator_overflowed_sandboxes',
      'sandbox_operator_adopted_without_marker',
      'sandbox_operator_drains_blocked',
    ])
      expect(series(samples, name), name).toHaveLength(1);
  });

  it('serves every series the metrics module defines (the list docs/metrics.md and the alerts are checked against)', () => {
    const metrics = createMetrics();
    registerStateGauges(metrics.registry, () => []);
    const served = seriesNames(samples);
    // prom-client's default process_* and nodejs_* series are its own; some appear only after a GC.
    const ours = [...registrySeriesNames(metrics.registry)].filter(
      (name) => !/^(nodejs|process)_/.test(name),
    );
    expect(ours.length).toBeGreaterThan(30);
    expect(ours.filter((name) => !served.has(name))).toEqual([]);
  });

  it.each(KUBEBUILDER_DASHBOARD_QUERIES)('answers the kubebuilder dashboard panel "$panel"', (query) => {
    const labels = Object.fromEntries(query.labels.map((label) => [label, true as const]));
    expect(series(samples, query.series, labels).length).toBeGreaterThan(0);
  });
});
