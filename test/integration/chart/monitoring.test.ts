/**
 * The chart's alerts and dashboard: off by default; the PrometheusRule passes `promtool check rules`
 * (promtool built from its Go module at the pinned version), its alerts fire on the series the operator
 * serves (`promtool test rules`), and every expression of the rules and the dashboard names only series the
 * operator exports.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createMetrics } from '../../../operator/controller/wiring/metrics.ts';
import { registerStateGauges } from '../../../operator/controller/wiring/state-metrics.ts';
import { ensureBinaries } from '@sandbox-operator/local-cluster';
import { registrySeriesNames } from '../../harness/prometheus-text.ts';
import { seriesIn } from '../../harness/promql.ts';
import { find, kinds, template, type Manifest } from './helm.ts';

const run = promisify(execFile);
const monitoring = {
  metrics: {
    expose: true,
    serviceMonitor: { enabled: true },
    prometheusRule: { enabled: true, blockedDeletionSeconds: 1800, extraAlertLabels: { team: 'platform' } },
    grafanaDashboard: { enabled: true },
  },
};
type Rule = { alert: string; expr: string; for: string; labels: Record<string, string> };
type RuleSpec = { groups: { name: string; rules: Rule[] }[] };

let exported: Set<string>;
let promtool: string;
let rule: Manifest & { spec: RuleSpec };
let dir: string;

beforeAll(async () => {
  const metrics = createMetrics();
  registerStateGauges(metrics.registry, () => []);
  exported = registrySeriesNames(metrics.registry);
  ({ promtool } = await ensureBinaries({ tools: ['promtool'] }));
  rule = find(await template(monitoring), 'PrometheusRule') as Manifest & { spec: RuleSpec };
  dir = await mkdtemp(join(tmpdir(), 'chart-rules-'));
  await writeFile(join(dir, 'rules.yaml'), stringify(rule.spec));
  // promtool test rules compares annotations too; the expressions, `for` and labels are what is tested here
  // (check rules validates the annotation templates).
  const bare = {
    groups: rule.spec.groups.map((group) => ({
      ...group,
      rules: group.rules.map(({ alert, expr, for: wait, labels }) => ({ alert, expr, for: wait, labels })),
    })),
  };
  await writeFile(join(dir, 'rules-bare.yaml'), stringify(bare));
}, 1_800_000);

async function promtoolRun(args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(promtool, args, { cwd: dir });
    return { code: 0, out: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, out: (failed.stdout ?? '') + (failed.stderr ?? '') };
  }
}

const alerts = () => rule.spec.groups.flatMap((group) => group.rules);

describe('alerts and dashboard', () => {
  it('are off by default', async () => {
    const rendered = kinds(await template());
    expect(rendered.filter((kind) => kind.startsWith('PrometheusRule/'))).toEqual([]);
    expect(rendered).not.toContain('ConfigMap/sandbox-operator-dashboard');
  });

  it('alert on blocked deletions, overflow, blocked drains, reconcile errors, watch restarts and a missing leader', () => {
    expect(alerts().map((a) => a.alert)).toEqual([
      'SandboxDeletionBlocked',
      'SandboxIndexOverflowed',
      'SandboxBlocksNodeDrain',
      'SandboxOperatorReconcileErrors',
      'SandboxOperatorWatchRestarts',
      'SandboxOperatorNoLeader',
    ]);
    expect(alerts()[0]!.expr).toContain('> 1800');
    for (const alert of alerts()) expect(alert.labels).toMatchObject({ team: 'platform' });
  });

  it('parse with promtool check rules', async () => {
    const result = await promtoolRun(['check', 'rules', 'rules.yaml']);
    expect(result.out).toContain('SUCCESS: 6 rules found');
    expect(result.code).toBe(0);
  });

  it('name only series the operator exports, in every alert', () => {
    for (const alert of alerts()) {
      const names = seriesIn(alert.expr);
      expect(names.length, alert.alert).toBeGreaterThan(0);
      expect(
        names.filter((name) => !exported.has(name)),
        alert.alert,
      ).toEqual([]);
    }
  });

  it('fire on the series as the operator serves them and Prometheus scrapes them (promtool test rules)', async () => {
    const target = 'job="sandbox-operator-metrics", namespace="sandbox-system", pod="sandbox-operator-0"';
    const tests = {
      rule_files: ['rules-bare.yaml'],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: [
            { series: `sandbox_operator_oldest_blocked_deletion_seconds{${target}}`, values: '0 3600x20' },
            { series: `sandbox_operator_overflowed_sandboxes{${target}}`, values: '1x20' },
            { series: `sandbox_operator_drains_blocked{${target}}`, values: '1x20' },
            {
              series: `controller_runtime_reconcile_total{${target}, controller="sandbox", result="error"}`,
              values: '0+5x40',
            },
            {
              series: `controller_runtime_reconcile_errors_total{${target}, controller="sandbox"}`,
              values: '0+5x40',
            },
            {
              series: `sandbox_operator_watch_restarts_total{${target}, resource="pods", reason="error"}`,
              values: '0+1x20',
            },
            { series: `leader_election_master_status{${target}, name="sandbox-operator"}`, values: '0x20' },
          ],
          alert_rule_test: [
            {
              eval_time: '10m',
              alertname: 'SandboxDeletionBlocked',
              exp_alerts: [{ exp_labels: { severity: 'warning', team: 'platform' } }],
            },
            {
              eval_time: '10m',
              alertname: 'SandboxIndexOverflowed',
              exp_alerts: [{ exp_labels: { severity: 'warning', team: 'platform' } }],
            },
            {
              eval_time: '16m',
              alertname: 'SandboxBlocksNodeDrain',
              exp_alerts: [{ exp_labels: { severity: 'warning', team: 'platform' } }],
            },
            {
              eval_time: '35m',
              alertname: 'SandboxOperatorReconcileErrors',
              exp_alerts: [{ exp_labels: { severity: 'warning', team: 'platform' } }],
            },
            {
              eval_time: '20m',
              alertname: 'SandboxOperatorWatchRestarts',
              exp_alerts: [{ exp_labels: { severity: 'warning', team: 'platform' } }],
            },
            {
              eval_time: '10m',
              alertname: 'SandboxOperatorNoLeader',
              exp_alerts: [{ exp_labels: { severity: 'critical', team: 'platform' } }],
            },
          ],
        },
        {
          // A healthy operator: a leader, no blocked deletion, no overflow, no errors: nothing fires.
          interval: '1m',
          input_series: [
            { series: `sandbox_operator_oldest_blocked_deletion_seconds{${target}}`, values: '0x40' },
            { series: `sandbox_operator_overflowed_sandboxes{${target}}`, values: '0x40' },
            { series: `sandbox_operator_drains_blocked{${target}}`, values: '0x40' },
            {
              series: `controller_runtime_reconcile_total{${target}, controller="sandbox", result="success"}`,
              values: '0+5x40',
            },
            {
              series: `controller_runtime_reconcile_errors_total{${target}, controller="sandbox"}`,
              values: '0x40',
            },
            { series: `leader_election_master_status{${target}, name="sandbox-operator"}`, values: '1x40' },
          ],
          alert_rule_test: [
            'SandboxDeletionBlocked',
            'SandboxIndexOverflowed',
            'SandboxBlocksNodeDrain',
            'SandboxOperatorReconcileErrors',
            'SandboxOperatorWatchRestarts',
            'SandboxOperatorNoLeader',
          ].map((alertname) => ({ eval_time: '35m', alertname, exp_alerts: [] })),
        },
      ],
    };
    await writeFile(join(dir, 'tests.yaml'), stringify(tests));
    const result = await promtoolRun(['test', 'rules', 'tests.yaml']);
    expect(result.out).toContain('SUCCESS');
    expect(result.code).toBe(0);
  });

  it('ship a dashboard of decisions by verdict, queue depth and latency that reads only exported series', async () => {
    const configMap = find(
      await template(monitoring),
      'ConfigMap',
      'sandbox-operator-dashboard',
    ) as Manifest & {
      data: Record<string, string>;
    };
    expect(configMap.metadata.labels).toMatchObject({ grafana_dashboard: '1' });
    const dashboard = JSON.parse(configMap.data['sandbox-operator.json']!) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    const titles = dashboard.panels.map((panel) => panel.title);
    expect(titles).toEqual(
      expect.arrayContaining(['Decisions by verdict', 'Work queue depth', 'Reconcile latency']),
    );
    for (const panel of dashboard.panels)
      for (const target of panel.targets) {
        const names = seriesIn(target.expr);
        expect(names.length, panel.title).toBeGreaterThan(0);
        expect(
          names.filter((name) => !exported.has(name)),
          panel.title,
        ).toEqual([]);
      }
  });
});
