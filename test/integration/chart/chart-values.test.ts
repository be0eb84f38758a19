/**
 * The chart with every optional part switched on, and the values it refuses: values.schema.json names the
 * field and the limit; rules relating two values fail the render with both names.
 */
import type { V1Deployment, V1NetworkPolicy } from '@kubernetes/client-node';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../../operator/controller/wiring/config.ts';
import { CHART, find, kinds, template, templateResult, type Rendered } from './helm.ts';
import { NON_DEFAULT_VALUES } from './values.ts';

const deployment = (rendered: Rendered) => find(rendered, 'Deployment') as unknown as V1Deployment;

describe('the chart with non-default values', () => {
  it('adds the PodDisruptionBudget, ServiceMonitor, PrometheusRule, dashboard, NetworkPolicy and per-namespace shell reaper identities', async () => {
    expect(kinds(await template(NON_DEFAULT_VALUES, { release: 'sbx' }))).toEqual([
      'ClusterRole/sbx-operator',
      'ClusterRole/sbx-operator-namespace',
      'ClusterRole/sbx-shell-reaper',
      'ClusterRoleBinding/sbx-operator-namespace',
      'ConfigMap/sbx-admission',
      'ConfigMap/sbx-dashboard',
      'Deployment/sbx',
      'NetworkPolicy/sbx',
      'PodDisruptionBudget/sbx',
      'PrometheusRule/sbx',
      'Role/sbx-api-server-endpoints',
      'Role/sbx-leader-election',
      'RoleBinding/sbx-api-server-endpoints',
      'RoleBinding/sbx-leader-election',
      'RoleBinding/sbx-operator',
      'RoleBinding/sbx-shell-reaper',
      'RoleBinding/sbx-shell-reaper',
      'Service/sbx-metrics',
      'ServiceAccount/sandbox-shell-reaper',
      'ServiceAccount/sandbox-shell-reaper',
      'ServiceAccount/sbx',
      'ServiceMonitor/sbx',
      'ValidatingAdmissionPolicy/sbx-budget-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/sbx-claim-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/sbx-guard-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/sbx-operator-bounds.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/sbx-pod-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/sbx-pod-template.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/sbx-reaper-access.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/sbx-shell-reaper-events.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/sbx-shell-reaper-status.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/sbx-budget-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/sbx-claim-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/sbx-guard-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/sbx-operator-bounds.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/sbx-pod-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/sbx-pod-template.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/sbx-reaper-access.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/sbx-shell-reaper-events.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/sbx-shell-reaper-status.sandbox.agents.dev',
    ]);
  });

  it('passes flags the operator accepts, with the ledger token read from the mounted Secret', async () => {
    const rendered = await template(NON_DEFAULT_VALUES, { release: 'sbx', namespace: 'platform' });
    const pod = deployment(rendered).spec!.template.spec!;
    const main = pod.containers[0]!;
    expect(main.image).toBe(`registry.example.com/platform/sandbox-operator:0.1.0@sha256:${'a'.repeat(64)}`);
    const mount = main.volumeMounts!.find((m) => m.name === 'ledger-token')!;
    expect(pod.volumes!.find((v) => v.name === 'ledger-token')?.secret).toEqual({
      secretName: 'ledger-token',
      items: [{ key: 'bearer', path: 'token' }],
    });
    const tokenFlag = `--ledger-token-file=${mount.mountPath}/token`;
    expect(main.args).toContain(tokenFlag);
    // The config loader reads the token file: stand in a local file at the same place in the flags.
    const token = join(await mkdtemp(join(tmpdir(), 'ledger-')), 'token');
    await writeFile(token, 'secret-token\n');
    const args = main.args!.map((arg) => (arg === tokenFlag ? `--ledger-token-file=${token}` : arg));
    expect(loadConfig(args, {})).toMatchObject({
      workers: 16,
      namespace: 'team-a',
      leaderElect: true,
      leaseNamespace: 'platform',
      leaseName: 'sandbox-operator-leader',
      probeBind: ':9090',
      metricsBind: ':9090',
      resyncMs: 120000,
      ledgerUrl: 'https://ledger.platform.svc:8443',
      locatorUrl: 'https://ledger.platform.svc:8443',
      ledgerToken: 'secret-token',
      reconcileBudgetMs: 15000,
      reconcileConcurrency: 4,
      sidecarImage: 'registry.example.com/platform/reaper:1.0.0',
      logLevel: 'debug',
      clusterDns: {
        namespace: 'openshift-dns',
        podLabels: { 'dns.operator.openshift.io/daemonset-dns': 'default' },
      },
      clusterDnsAddress: ['169.254.20.10', 'fd00::a'],
    });
  });

  it('binds the accounts templates keep to the shell reaper’s role, beside its own, in each namespace', async () => {
    const rendered = await template(NON_DEFAULT_VALUES, { release: 'sbx' });
    const bindings = rendered.objects.filter(
      (o) => o.kind === 'RoleBinding' && o.metadata.name === 'sbx-shell-reaper',
    );
    expect(bindings.map((b) => [b.metadata.namespace, b['subjects']])).toEqual(
      ['team-a', 'team-b'].map((namespace) => [
        namespace,
        [
          { kind: 'ServiceAccount', name: 'sandbox-shell-reaper', namespace },
          { kind: 'ServiceAccount', name: 'agent-identity', namespace },
        ],
      ]),
    );
  });

  it('leaves the user ids to the platform when asked, and keeps the rest of the hardening', async () => {
    const pod = deployment(await template(NON_DEFAULT_VALUES)).spec!.template.spec!;
    expect(pod.securityContext).toEqual({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.containers[0]!.securityContext?.readOnlyRootFilesystem).toBe(true);
  });

  it('binds the operator in the watched namespace only, and lets the extra user delete sandbox pods', async () => {
    const rendered = await template(NON_DEFAULT_VALUES, { release: 'sbx', namespace: 'platform' });
    expect(find(rendered, 'RoleBinding', 'sbx-operator')).toMatchObject({
      metadata: { namespace: 'team-a' },
      roleRef: { kind: 'ClusterRole', name: 'sbx-operator' },
      subjects: [
        { kind: 'ServiceAccount', name: 'sbx', namespace: 'platform' },
        { kind: 'User', name: 'sandbox-operator-dev' },
      ],
    });
    // The one cluster-wide binding reads the watched namespace alone (its PodSecurity label), by name, and
    // which nodes are being drained (cluster-scoped, read only).
    expect(
      rendered.objects.filter((o) => o.kind === 'ClusterRoleBinding').map((o) => o.metadata.name),
    ).toEqual(['sbx-operator-namespace']);
    expect(find(rendered, 'ClusterRole', 'sbx-operator-namespace')).toMatchObject({
      rules: [
        {
          apiGroups: [''],
          resources: ['namespaces'],
          resourceNames: ['team-a'],
          verbs: ['get', 'list', 'watch'],
        },
        { apiGroups: [''], resources: ['nodes'], verbs: ['list', 'watch'] },
      ],
    });
    expect(find(rendered, 'ConfigMap')).toMatchObject({
      data: { operatorUsers: 'system:serviceaccount:platform:sbx,break-glass-admin' },
    });
  });

  it('restricts traffic to DNS, the API server, the extra egress and scrapes from the monitoring namespace', async () => {
    const policy = find(await template(NON_DEFAULT_VALUES), 'NetworkPolicy') as unknown as V1NetworkPolicy;
    if (!policy.spec) throw new Error('the NetworkPolicy has no spec');
    expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(policy.spec.ingress).toEqual([
      {
        ports: [{ port: 'http', protocol: 'TCP' }],
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
      },
    ]);
    expect(policy.spec.egress).toEqual([
      {
        ports: [
          { port: 53, protocol: 'UDP' },
          { port: 53, protocol: 'TCP' },
        ],
      },
      {
        ports: [
          { port: 443, protocol: 'TCP' },
          { port: 6443, protocol: 'TCP' },
        ],
        to: [{ ipBlock: { cidr: '10.96.0.1/32' } }],
      },
      { to: [{ ipBlock: { cidr: '10.20.0.0/16' } }], ports: [{ port: 8443, protocol: 'TCP' }] },
    ]);
  });

  it('scrapes the metrics Service’s port with the ServiceMonitor', async () => {
    const rendered = await template(NON_DEFAULT_VALUES, { release: 'sbx' });
    const service = find(rendered, 'Service') as unknown as { spec: { selector: object; ports: object[] } };
    expect(find(rendered, 'ServiceMonitor')).toMatchObject({
      metadata: { labels: { release: 'prometheus' } },
      spec: {
        selector: { matchLabels: service.spec.selector },
        endpoints: [{ port: 'http', path: '/metrics' }],
      },
    });
    expect(service.spec.ports[0]).toMatchObject({ name: 'http', port: 9090 });
  });
});

describe('bad values', () => {
  it.each([
    [{ operator: { workers: 0 } }, "at '/operator/workers': minimum: got 0, want 1"],
    [{ operator: { workers: 65 } }, "at '/operator/workers': maximum: got 65, want 64"],
    [{ operator: { logLevel: 'loud' } }, "at '/operator/logLevel': value must be one of"],
    [{ operator: { clusterDns: 'kube-system' } }, "at '/operator/clusterDns': 'kube-system' does not match"],
    [
      { operator: { clusterDnsAddresses: ['169.254.20.10/32'] } },
      "at '/operator/clusterDnsAddresses/0': '169.254.20.10/32' does not match",
    ],
    [
      { operator: { clusterDnsAddresses: ['node-local-dns'] } },
      "at '/operator/clusterDnsAddresses/0': 'node-local-dns' does not match",
    ],
    [{ operator: { wokers: 8 } }, "at '/operator': additional properties 'wokers' not allowed"],
    [{ replicas: 2 }, "additional properties 'replicas' not allowed"],
    [{ securityContext: { runAsUser: 0 } }, "at '/securityContext/runAsUser': minimum: got 0, want 1"],
    [{ securityContext: { privileged: true } }, "at '/securityContext': additional properties 'privileged'"],
    [{ metrics: { port: 80 } }, "at '/metrics/port': minimum: got 80, want 1,024"],
    [{ image: { digest: 'sha256:abc' } }, "at '/image/digest': 'sha256:abc' does not match pattern"],
    [{ ledger: { url: 'ledger.local' } }, "at '/ledger/url': 'ledger.local' does not match pattern"],
    [{ ledger: { url: 'http://ledger.local' } }, "at '/ledger/url': 'http://ledger.local' does not match"],
    [{ podTemplatePolicy: { level: 'loose' } }, "at '/podTemplatePolicy/level': value must be one of"],
    [{ shellReaper: { namespaces: ['Team_A'] } }, "at '/shellReaper/namespaces/0': 'Team_A' does not match"],
    [{ admissionPolicy: { extraOperatorUsers: ['a,b'] } }, "at '/admissionPolicy/extraOperatorUsers/0'"],
    [{ rbac: { extraSubjects: [{ kind: 'Robot', name: 'r' }] } }, "at '/rbac/extraSubjects/0/kind'"],
  ])('refuses %j, naming the field: %s', async (values, message) => {
    const result = await templateResult(values);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain("values don't meet the specifications of the schema");
    expect(result.stderr).toContain(message);
  });

  it.each([
    [{ podDisruptionBudget: { enabled: true } }, 'podDisruptionBudget.enabled needs replicaCount >= 2'],
    [
      { replicaCount: 2, operator: { leaderElection: { enabled: false } } },
      'replicaCount > 1 needs operator.leaderElection.enabled',
    ],
    [{ ledger: { tokenSecret: { name: 'tok' } } }, 'ledger.tokenSecret.name is set but ledger.url is empty'],
    [
      { metrics: { serviceMonitor: { enabled: true } } },
      'metrics.serviceMonitor.enabled needs metrics.expose=true',
    ],
  ])('refuses %j, naming both values: %s', async (values, message) => {
    const result = await templateResult(values);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain(message);
  });

  it('documents every key of values.yaml in the schema', async () => {
    const values = parse(await readFile(join(CHART, 'values.yaml'), 'utf8')) as Record<string, unknown>;
    const schema = JSON.parse(await readFile(join(CHART, 'values.schema.json'), 'utf8')) as SchemaNode;
    expect(undocumented(values, schema, '')).toEqual([]);
  });
});

type SchemaNode = { description?: string; properties?: Record<string, SchemaNode> };

/** Keys of `values` (nested objects included) whose schema node is missing or has no description. */
function undocumented(values: Record<string, unknown>, schema: SchemaNode, path: string): string[] {
  return Object.entries(values).flatMap(([key, value]) => {
    const node = schema.properties?.[key];
    const here = `${path}.${key}`;
    if (node?.description === undefined) return [here];
    const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
    return isObject && node.properties ? undocumented(value as Record<string, unknown>, node, here) : [];
  });
}
