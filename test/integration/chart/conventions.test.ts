/**
 * What a platform team checks on day one: its own ServiceAccount or RBAC, two releases side by side,
 * high availability (spread, priority, a PDB by maxUnavailable), chart-testing's ci values, Chart.yaml's
 * metadata and Artifact Hub annotations (their CRD examples are valid objects), and the `helm test` hooks.
 */
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';
import { kwokNodeName } from '@sandbox-operator/local-cluster';
import { eventually } from '../controller/operator.ts';
import { CHART, find, helm, kinds, template, templateResult, type Rendered } from './helm.ts';

const deployment = (rendered: Rendered) => find(rendered, 'Deployment') as unknown as V1Deployment;
const podSpec = (rendered: Rendered) => deployment(rendered).spec!.template.spec!;
const RBAC_KINDS = /^(ClusterRole|ClusterRoleBinding|Role|RoleBinding)\//;
const CLUSTER_SCOPED =
  /^(ClusterRole|ClusterRoleBinding|ValidatingAdmissionPolicy|ValidatingAdmissionPolicyBinding)\//;
const namespace = testNamespace('chart-conventions');

describe('bringing your own ServiceAccount and RBAC', () => {
  it('runs as a named existing ServiceAccount, and binds the rules to it', async () => {
    const rendered = await template({ serviceAccount: { create: false, name: 'platform-operator' } });
    expect(kinds(rendered).filter((kind) => kind.startsWith('ServiceAccount/'))).toEqual([]);
    expect(podSpec(rendered).serviceAccountName).toBe('platform-operator');
    expect(find(rendered, 'ClusterRoleBinding')).toMatchObject({
      subjects: [{ kind: 'ServiceAccount', name: 'platform-operator', namespace: 'sandbox-system' }],
    });
    expect(find(rendered, 'ConfigMap', 'sandbox-operator-admission')).toMatchObject({
      data: { operatorUsers: 'system:serviceaccount:sandbox-system:platform-operator' },
    });
  });

  it('refuses serviceAccount.create=false without a name, saying which value to set', async () => {
    const result = await templateResult({ serviceAccount: { create: false } });
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('set serviceAccount.name');
  });

  it('creates no Role, ClusterRole or binding with rbac.create=false, and still the ServiceAccount', async () => {
    const rendered = await template({ rbac: { create: false }, shellReaper: { namespaces: ['team-a'] } });
    expect(kinds(rendered).filter((kind) => RBAC_KINDS.test(kind))).toEqual([]);
    expect(kinds(rendered)).toContain('ServiceAccount/sandbox-operator');
    expect(kinds(rendered)).toContain('ServiceAccount/sandbox-shell-reaper');
  });
});

describe('two releases in one cluster', () => {
  it('share no cluster-scoped name, nor a name in one namespace', async () => {
    const names = async (release: string) =>
      kinds(await template({}, { release, namespace: 'sandbox-system' }));
    const [a, b] = [await names('team-a'), await names('team-b')];
    expect(a.filter((kind) => b.includes(kind))).toEqual([]);
    expect(a.filter((kind) => CLUSTER_SCOPED.test(kind)).length).toBeGreaterThanOrEqual(6);
  });

  it('tells each operator the name of its own admission parameters', async () => {
    const env = (rendered: Rendered) => podSpec(rendered).containers[0]!.env ?? [];
    expect(env(await template())).toContainEqual({
      name: 'SANDBOX_OPERATOR_ADMISSION_PARAMS',
      value: 'sandbox-system/sandbox-operator-admission',
    });
    const disabled = await template({ admissionPolicy: { enabled: false } });
    expect(env(disabled).map((e) => e.name)).not.toContain('SANDBOX_OPERATOR_ADMISSION_PARAMS');
  });
});

describe('two releases, one namespace each', () => {
  const teamA = testNamespace('release-a');
  const teamB = testNamespace('release-b');

  it("guards only the namespace each watches, so neither refuses the other's operator", async () => {
    // Release `team-a` watches teamA. The other release stands in as the harness's own policies, whose trusted
    // operator is the default chart's ServiceAccount.
    const rendered = await template({ operator: { watchNamespace: teamA } }, { release: 'team-a' });
    const admission = rendered.objects.filter(
      (o) =>
        o.kind.startsWith('ValidatingAdmissionPolicy') ||
        (o.kind === 'ConfigMap' && o.metadata.name === 'team-a-admission'),
    );
    const file = join(tmpdir(), `team-a-admission-${process.pid}.yaml`);
    await writeFile(file, admission.map((o) => stringify(o)).join('---\n'));
    const other = ['--as=system:serviceaccount:sandbox-system:sandbox-operator', '--as-group=system:masters'];
    try {
      // One sandbox pod in each namespace, made by the other operator before release team-a exists.
      for (const ns of [teamA, teamB]) {
        await kubectlOk(['apply', '-n', ns, '-f', '-'], { input: stringify(sandboxObject(ns)) });
        const uid = (
          await kubectlOk(['get', 'sandbox', 'guarded', '-n', ns, '-o', 'jsonpath={.metadata.uid}'])
        ).trim();
        await kubectlOk(['create', '-n', ns, '-f', '-', ...other], { input: stringify(sandboxPod(ns, uid)) });
      }
      await kubectlOk(['apply', '--server-side', '-f', file]);
      // In teamA, release team-a guards the pod: the other operator is refused, by team-a's policy.
      // (A new policy takes effect within a second or so: ask by server-side dry runs until it answers.)
      const deleteInA = ['delete', 'pod', 'guarded-0', '-n', teamA, '--dry-run=server', ...other];
      const refused = await eventually('team-a’s policy in effect', async () => {
        const result = await kubectl(deleteInA);
        return result.exitCode === 0 ? undefined : result;
      });
      expect(refused.stderr).toContain('team-a-pod-protection.sandbox.agents.dev');
      // In teamB, release team-a's policies do not apply: the other operator releases its pod.
      await kubectlOk(['delete', 'pod', 'guarded-0', '-n', teamB, '--wait=false', ...other]);
    } finally {
      await kubectl(['delete', '-f', file, '--ignore-not-found']);
      for (const ns of [teamA, teamB]) {
        const finalizers = '[{"op":"remove","path":"/metadata/finalizers"}]';
        await kubectl(['patch', 'pod', 'guarded-0', '-n', ns, '--type=json', '-p', finalizers, ...other]);
      }
    }
  });
});

const sandboxObject = (namespace: string) => ({
  apiVersion: 'sandbox.agents.dev/v1alpha1',
  kind: 'Sandbox',
  metadata: { name: 'guarded', namespace },
  spec: {
    replicas: 1,
    podTemplate: { spec: { containers: [{ name: 'agent', image: 'registry.example/agent:1' }] } },
  },
});

const sandboxPod = (namespace: string, uid: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'guarded-0',
    namespace,
    labels: { 'sandbox.agents.dev/sandbox': 'guarded' },
    finalizers: ['sandbox.agents.dev/exclusivity'],
    ownerReferences: [
      { apiVersion: 'sandbox.agents.dev/v1alpha1', kind: 'Sandbox', name: 'guarded', uid, controller: true },
    ],
  },
  spec: { nodeName: kwokNodeName(0), containers: [{ name: 'agent', image: 'registry.example/agent:1' }] },
});

describe('high availability', () => {
  it('spreads two or more replicas over nodes unless told otherwise, and one replica not at all', async () => {
    expect(podSpec(await template()).topologySpreadConstraints).toBeUndefined();
    expect(podSpec(await template({ replicaCount: 2 })).topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'kubernetes.io/hostname',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: {
          matchLabels: {
            'app.kubernetes.io/name': 'sandbox-operator',
            'app.kubernetes.io/instance': 'sandbox-operator',
            'app.kubernetes.io/component': 'operator',
          },
        },
      },
    ]);
    const own = [
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule' },
    ];
    const custom = await template({ replicaCount: 2, topologySpreadConstraints: own });
    expect(podSpec(custom).topologySpreadConstraints).toEqual(own);
  });

  it('sets the priority class, and a PDB by maxUnavailable instead of minAvailable', async () => {
    const rendered = await template({
      replicaCount: 3,
      priorityClassName: 'system-cluster-critical',
      podDisruptionBudget: { enabled: true, maxUnavailable: 1 },
    });
    expect(podSpec(rendered).priorityClassName).toBe('system-cluster-critical');
    const pdb = find(rendered, 'PodDisruptionBudget') as unknown as { spec: Record<string, unknown> };
    expect(pdb.spec['maxUnavailable']).toBe(1);
    expect(pdb.spec).not.toHaveProperty('minAvailable');
    const byMin = find(
      await template({ replicaCount: 2, podDisruptionBudget: { enabled: true } }),
      'PodDisruptionBudget',
    );
    expect((byMin as unknown as { spec: Record<string, unknown> }).spec).toMatchObject({ minAvailable: 1 });
  });
});

describe('chart-testing and Artifact Hub', () => {
  it('lints and renders every ci/*-values.yaml', async () => {
    const files = (await readdir(`${CHART}/ci`)).filter((file) => file.endsWith('-values.yaml'));
    expect(files.length).toBeGreaterThanOrEqual(4);
    for (const file of files) {
      const result = await helm([
        'lint',
        CHART,
        '--strict',
        '--kube-version',
        '1.36.3',
        '-f',
        `${CHART}/ci/${file}`,
      ]);
      expect(result.stdout + result.stderr, file).toContain('1 chart(s) linted, 0 chart(s) failed');
    }
  });

  it('carries home, sources, maintainers, icon and Artifact Hub annotations that match the chart', async () => {
    const chart = parse(await readFile(`${CHART}/Chart.yaml`, 'utf8')) as Record<string, unknown> & {
      annotations: Record<string, string>;
      appVersion: string;
    };
    for (const key of ['home', 'sources', 'maintainers', 'icon']) expect(chart, key).toHaveProperty(key);
    const annotations = chart.annotations;
    expect(annotations['artifacthub.io/license']).toBe('Apache-2.0');
    expect(annotations['artifacthub.io/operator']).toBe('true');
    const images = parse(annotations['artifacthub.io/images']!) as { image: string }[];
    expect(images.map((i) => i.image)).toEqual([podSpec(await template()).containers[0]!.image]);
    const crds = parse(annotations['artifacthub.io/crds']!) as { name: string }[];
    const shipped = (await readdir(`${CHART}/crds`)).map((file) => file.replace(/\.yaml$/, ''));
    expect(crds.map((crd) => crd.name).sort()).toEqual(shipped.sort());
  });

  it('has CRD examples the API server accepts', async () => {
    const chart = parse(await readFile(`${CHART}/Chart.yaml`, 'utf8')) as {
      annotations: Record<string, string>;
    };
    const examples = parse(chart.annotations['artifacthub.io/crdsExamples']!) as {
      metadata: { namespace: string };
    }[];
    expect(examples.map((e) => (e as unknown as { kind: string }).kind)).toEqual([
      'Sandbox',
      'SessionReference',
    ]);
    for (const example of examples) {
      const object = { ...example, metadata: { ...example.metadata, namespace } };
      const result = await kubectl(['create', '--dry-run=server', '-f', '-'], {
        input: JSON.stringify(object),
      });
      expect(result.stderr).toBe('');
      expect(result.exitCode).toBe(0);
    }
  });
});

describe('helm test', () => {
  it('checks readiness through the Service and a sandbox round trip, as test hooks', async () => {
    const rendered = await template({}, { tests: true });
    const pods = rendered.objects.filter((o) => o.kind === 'Pod') as unknown as V1Pod[];
    expect(pods.map((pod) => pod.metadata!.name).sort()).toEqual([
      'sandbox-operator-test-ready',
      'sandbox-operator-test-sandbox',
    ]);
    for (const pod of pods) expect(pod.metadata!.annotations?.['helm.sh/hook']).toBe('test');
    const ready = pods.find((pod) => pod.metadata!.name!.endsWith('ready'))!;
    expect(ready.spec!.containers[0]!.command).toContain(
      'http://sandbox-operator-metrics.sandbox-system.svc:8081/readyz',
    );
    const roundTrip = pods.find((pod) => pod.metadata!.name!.endsWith('sandbox'))!;
    expect(roundTrip.spec!.containers[0]!.command!.slice(0, 2)).toEqual([
      'node',
      'dist/bundle/chart-test.mjs',
    ]);
    expect(kinds(await template())).not.toContain('Pod/sandbox-operator-test-ready');
  });
});
