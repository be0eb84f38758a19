/**
 * The Helm chart as Helm sees it: lint, templates with default and non-default values, the flags the
 * Deployment passes (parsed by the operator's own config loader), least-privilege RBAC, and
 * values.schema.json refusing bad values with the field's path and the limit.
 */
import type { V1ClusterRole, V1Deployment, V1PolicyRule } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../operator/controller/wiring/config.ts';
import { CHART, find, helm, kinds, template, valuesFile, type Rendered } from './helm.ts';
import { NON_DEFAULT_VALUES } from './values.ts';

const deployment = (rendered: Rendered) => find(rendered, 'Deployment') as unknown as V1Deployment;
const container = (rendered: Rendered) => deployment(rendered).spec!.template.spec!.containers[0]!;

describe('helm lint', () => {
  it('passes with the default values', async () => {
    const result = await helm(['lint', CHART, '--strict', '--kube-version', '1.36.3']);
    expect(result.stderr + result.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    expect(result.exitCode).toBe(0);
  });

  it('passes with every optional part switched on', async () => {
    const result = await helm(['lint', CHART, '--strict', '-f', await valuesFile(NON_DEFAULT_VALUES)]);
    expect(result.exitCode).toBe(0);
  });
});

describe('the chart with default values', () => {
  it('renders the operator, its RBAC, the sidecar role and the admission policy — nothing optional', async () => {
    expect(kinds(await template())).toEqual([
      'ClusterRole/sandbox-operator-edit',
      'ClusterRole/sandbox-operator-operator',
      'ClusterRole/sandbox-operator-shell-reaper',
      'ClusterRole/sandbox-operator-view',
      'ClusterRoleBinding/sandbox-operator-operator',
      'ConfigMap/sandbox-operator-admission',
      'Deployment/sandbox-operator',
      'Role/sandbox-operator-api-server-endpoints',
      'Role/sandbox-operator-leader-election',
      'RoleBinding/sandbox-operator-api-server-endpoints',
      'RoleBinding/sandbox-operator-leader-election',
      'Service/sandbox-operator-metrics',
      'ServiceAccount/sandbox-operator',
      'ValidatingAdmissionPolicy/sandbox-operator-budget-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/sandbox-operator-claim-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/sandbox-operator-guard-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/sandbox-operator-operator-bounds.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/sandbox-operator-pod-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/sandbox-operator-pod-template.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/sandbox-operator-reaper-access.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/sandbox-operator-shell-reaper-events.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/sandbox-operator-shell-reaper-status.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/sandbox-operator-budget-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/sandbox-operator-claim-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/sandbox-operator-guard-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/sandbox-operator-operator-bounds.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/sandbox-operator-pod-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/sandbox-operator-pod-template.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/sandbox-operator-reaper-access.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/sandbox-operator-shell-reaper-events.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/sandbox-operator-shell-reaper-status.sandbox.agents.dev',
    ]);
  });

  it('runs the operator non-root, read-only, without privilege escalation or capabilities', async () => {
    const rendered = await template();
    const pod = deployment(rendered).spec!.template.spec!;
    expect(pod.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container(rendered).securityContext).toEqual({
      allowPrivilegeEscalation: false,
      privileged: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(pod.serviceAccountName).toBe('sandbox-operator');
    expect(container(rendered).resources).toEqual({
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { memory: '512Mi' },
    });
  });

  it('probes /healthz and /readyz on the http port, and keeps /metrics on the pod’s loopback', async () => {
    const main = container(await template());
    expect(main.ports).toEqual([{ name: 'http', containerPort: 8081, protocol: 'TCP' }]);
    expect(main.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(main.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(main.args).toContain('--probe-bind=:8081');
    expect(main.args).toContain('--metrics-bind=127.0.0.1:8080');
  });

  it('passes flags the operator accepts, with leader election on in the release namespace', async () => {
    const main = container(await template({}, { namespace: 'platform' }));
    expect(main.command).toEqual(['node', 'dist/bundle/main.mjs']);
    const config = loadConfig(main.args!, {});
    expect(config).toMatchObject({
      workers: 8,
      leaderElect: true,
      leaseNamespace: 'platform',
      leaseName: 'sandbox-operator',
      probeBind: ':8081',
      metricsBind: '127.0.0.1:8080',
      sidecarImage: 'ghcr.io/sandbox-operator/sandbox-operator:0.1.0',
      sidecarServiceAccount: 'sandbox-shell-reaper',
      logLevel: 'info',
    });
    expect(config.namespace).toBeUndefined();
    expect(config.ledgerUrl).toBeUndefined();
  });

  it('fills the admission policy with the release namespace and the operator’s ServiceAccount', async () => {
    const rendered = await template({}, { release: 'sbx', namespace: 'platform' });
    expect(find(rendered, 'ConfigMap', 'sbx-admission')).toMatchObject({
      metadata: { namespace: 'platform' },
      data: { operatorUsers: 'system:serviceaccount:platform:sbx' },
    });
    expect(find(rendered, 'ValidatingAdmissionPolicyBinding')).toMatchObject({
      metadata: { name: 'sbx-pod-protection.sandbox.agents.dev' },
      spec: {
        policyName: 'sbx-pod-protection.sandbox.agents.dev',
        paramRef: { name: 'sbx-admission', namespace: 'platform' },
      },
    });
    expect(container(rendered).env).toContainEqual({
      name: 'SANDBOX_OPERATOR_ADMISSION_PARAMS',
      value: 'platform/sbx-admission',
    });
  });
});

const rulesOf = (rendered: Rendered) =>
  rendered.objects
    .filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role')
    .flatMap((o) => (o as unknown as V1ClusterRole).rules ?? [])
    .map((rule: V1PolicyRule) => rule);

describe('the chart’s RBAC', () => {
  it('uses no wildcard anywhere', async () => {
    for (const values of [{}, NON_DEFAULT_VALUES]) {
      for (const rule of rulesOf(await template(values))) {
        expect([...(rule.apiGroups ?? []), ...(rule.resources ?? []), ...rule.verbs]).not.toContain('*');
        expect(rule.resources?.some((resource) => resource.endsWith('/*'))).not.toBe(true);
      }
    }
  });

  it('names the status and finalizers subresources the operator writes', async () => {
    const operator = find(
      await template(),
      'ClusterRole',
      'sandbox-operator-operator',
    ) as unknown as V1ClusterRole;
    const verbsOf = (resource: string) =>
      operator.rules!.find((rule) => rule.resources?.includes(resource))?.verbs;
    expect(verbsOf('sandboxes/status')).toEqual(['get', 'patch']);
    expect(verbsOf('sandboxes/finalizers')).toEqual(['update']);
    // create: a warm pool's and a cold sandbox claim's sandboxes, and a claim's reference, only as
    // operator-bounds allows (docs/warm-pools.md, "Who may do what"); never an update of either.
    expect(verbsOf('sandboxes')).toContain('create');
    expect(verbsOf('sandboxes')).not.toContain('update');
    expect(verbsOf('sessionreferences')).not.toContain('update');
    expect(verbsOf('sandboxwarmpools/status')).toEqual(['get', 'patch', 'update']);
    expect(verbsOf('sandboxclaims/finalizers')).toEqual(['update']);
    expect(verbsOf('sandboxtemplates')).toEqual(['get', 'list', 'watch']);
  });

  it('gives the shell reaper only its SessionReferences’ status and Events', async () => {
    const reaper = find(
      await template(),
      'ClusterRole',
      'sandbox-operator-shell-reaper',
    ) as unknown as V1ClusterRole;
    expect(reaper.rules).toEqual([
      {
        apiGroups: ['sandbox.agents.dev'],
        resources: ['sessionreferences'],
        verbs: ['list', 'watch'],
      },
      { apiGroups: ['sandbox.agents.dev'], resources: ['sessionreferences/status'], verbs: ['patch'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create'] },
    ]);
  });
});
