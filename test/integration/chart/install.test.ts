/**
 * The rendered chart on a real API server: a server-side dry run accepts it and creates nothing, the real
 * apply grants the operator its rules, and the operator running as the restricted user under exactly those
 * rules completes a deletion — while a request outside them is refused.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kwokNodeName, RESTRICTED_USER } from '@sandbox-operator/local-cluster';
import { kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';
import {
  createReference,
  deleteReference,
  deleteSandbox,
  sandboxManifest,
  untilSandbox,
  sandboxGone,
} from '../controller/fixtures.ts';
import { core, OPERATOR_NAMESPACE, startOperator, type RunningOperator } from '../controller/operator.ts';
import { template } from './helm.ts';

const namespace = testNamespace('chart');
const RELEASE = 'sandbox-operator';
let manifests: string;
let operator: RunningOperator | undefined;
// The local control plane pre-installs crds/policies/ (the kubectl-only install); the chart takes over
// those objects, as `helm install --take-ownership` would.
const APPLY = ['apply', '--server-side', '--force-conflicts', '--field-manager=helm'];

/** The chart as a platform team would install it, plus the restricted user standing in for the pod. */
const values = () => ({
  replicaCount: 2,
  podDisruptionBudget: { enabled: true },
  networkPolicy: { enabled: true },
  shellReaper: { namespaces: [namespace] },
  rbac: { extraSubjects: [{ kind: 'User', name: RESTRICTED_USER, apiGroup: 'rbac.authorization.k8s.io' }] },
  admissionPolicy: { extraOperatorUsers: [RESTRICTED_USER] },
  // The fixtures' Sandboxes name a kwok node, as the local control plane allows (tools/local-cluster/crds.ts).
  podTemplatePolicy: { allowedNodeNames: [0, 1, 2].map(kwokNodeName) },
});

/** `kubectl auth can-i`, asked by the admin on behalf of `user`. */
async function canI(user: string, verb: string, resource: string, ...flags: string[]): Promise<boolean> {
  const result = await kubectl(['auth', 'can-i', verb, resource, `--as=${user}`, ...flags]);
  if (result.exitCode > 1) throw new Error(`kubectl auth can-i failed: ${result.stderr}`);
  return result.stdout.trim() === 'yes';
}

beforeAll(async () => {
  const rendered = await template(values(), { release: RELEASE, namespace: OPERATOR_NAMESPACE });
  const dir = await mkdtemp(join(tmpdir(), 'chart-install-'));
  manifests = join(dir, 'manifests.yaml');
  await writeFile(manifests, rendered.text);
  // Other test files bind the same rules to the restricted user; start from none, so what it can do
  // below comes from this apply.
  await kubectlOk(['delete', 'clusterrolebinding', `${RELEASE}-operator`, '--ignore-not-found']);
  await kubectlOk([
    'delete',
    'rolebinding',
    `${RELEASE}-leader-election`,
    '-n',
    OPERATOR_NAMESPACE,
    '--ignore-not-found',
  ]);
});
/**
 * The release takes over the harness's admission parameters (crds/policies/): it lists its own image as the
 * reaper's and leaves sandbox pods off the host network. Later test files run operators with other sidecar
 * images, on a node whose loopback policy puts their pods on the host network: give them back the harness's.
 */
const HARNESS_PARAMS = ['reaperImages', 'sandboxPodsOnHostNetwork'] as const;
let harnessParams: Record<string, string> = {};
beforeAll(async () => {
  const params = JSON.parse(
    await kubectlOk(['get', 'configmap', `${RELEASE}-admission`, '-n', OPERATOR_NAMESPACE, '-o', 'json']),
  ) as { data?: Record<string, string> };
  harnessParams = Object.fromEntries(HARNESS_PARAMS.map((key) => [key, params.data?.[key] ?? '']));
});
afterAll(async () => {
  await operator?.stop();
  await kubectlOk([
    'patch',
    'configmap',
    `${RELEASE}-admission`,
    '-n',
    OPERATOR_NAMESPACE,
    '--type=merge',
    '-p',
    JSON.stringify({ data: harnessParams }),
  ]);
});

describe('installing the rendered chart', () => {
  it('passes a server-side dry run and creates nothing', async () => {
    expect(await canI(RESTRICTED_USER, 'list', 'sandboxes.sandbox.agents.dev')).toBe(false);
    const result = await kubectl([...APPLY, '--dry-run=server', '-f', manifests]);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain(`deployment.apps/${RELEASE} serverside-applied (server dry run)`);
    expect(result.stdout).toContain(`clusterrolebinding.rbac.authorization.k8s.io/${RELEASE}-operator`);
    const deployment = await kubectl(['get', 'deployment', RELEASE, '-n', OPERATOR_NAMESPACE]);
    expect(deployment.stderr).toContain('NotFound');
    expect(await canI(RESTRICTED_USER, 'list', 'sandboxes.sandbox.agents.dev')).toBe(false);
  });

  it('passes a server-side dry run with the default values as well', async () => {
    const defaults = await template({}, { release: RELEASE, namespace: OPERATOR_NAMESPACE });
    const result = await kubectl([...APPLY, '--dry-run=server', '-f', '-'], { input: defaults.text });
    expect(result.stderr).toBe('');
    expect(result.stdout.match(/\(server dry run\)/g)).toHaveLength(defaults.objects.length);
  });

  it('applies for real and grants the operator its rules, and nothing else', async () => {
    await kubectlOk([...APPLY, '-f', manifests]);
    const replicas = await kubectlOk([
      'get',
      'deployment',
      RELEASE,
      '-n',
      OPERATOR_NAMESPACE,
      '-o',
      'jsonpath={.spec.replicas}',
    ]);
    expect(replicas).toBe('2');
    const granted: [string, string, string[]][] = [
      ['list', 'sandboxes.sandbox.agents.dev', []],
      ['patch', 'sandboxes.sandbox.agents.dev', ['--subresource=status']],
      ['update', 'sandboxes.sandbox.agents.dev', ['--subresource=finalizers']],
      ['delete', 'sessionreferences.sandbox.agents.dev', ['-n', namespace]],
      // Warm pools (docs/warm-pools.md): admission bounds these to the pools' and sandbox claims' writes.
      ['create', 'sandboxes.sandbox.agents.dev', ['-n', namespace]],
      ['create', 'sessionreferences.sandbox.agents.dev', ['-n', namespace]],
      ['watch', 'sandboxwarmpools.sandbox.agents.dev', ['-n', namespace]],
      ['watch', 'sandboxtemplates.sandbox.agents.dev', ['-n', namespace]],
      ['patch', 'sandboxwarmpools.sandbox.agents.dev', ['--subresource=status', '-n', namespace]],
      ['create', 'pods', ['-n', namespace]],
      ['create', 'poddisruptionbudgets.policy', ['-n', namespace]],
      // The eviction guard is watched, repaired and removed at release (it has no owner to cascade from).
      ['watch', 'poddisruptionbudgets.policy', ['-n', namespace]],
      ['update', 'poddisruptionbudgets.policy', ['-n', namespace]],
      ['delete', 'poddisruptionbudgets.policy', ['-n', namespace]],
      ['update', 'leases.coordination.k8s.io', ['-n', OPERATOR_NAMESPACE]],
      // Read at start to check that the pod-protection policy trusts this identity.
      ['get', 'configmaps/sandbox-operator-admission', ['-n', OPERATOR_NAMESPACE]],
    ];
    for (const [verb, resource, flags] of granted)
      expect(await canI(RESTRICTED_USER, verb, resource, ...flags), `${verb} ${resource}`).toBe(true);
    const refused: [string, string, string[]][] = [
      ['update', 'sandboxes.sandbox.agents.dev', ['-n', namespace]],
      ['update', 'sandboxwarmpools.sandbox.agents.dev', ['-n', namespace]],
      ['delete', 'sandboxwarmpools.sandbox.agents.dev', ['-n', namespace]],
      ['list', 'secrets', ['-A']],
      ['delete', 'namespaces', []],
      ['update', 'leases.coordination.k8s.io', ['-n', namespace]],
      ['deletecollection', 'poddisruptionbudgets.policy', ['-n', namespace]],
      ['patch', 'poddisruptionbudgets.policy', ['-n', namespace]],
      ['get', 'configmaps', ['-n', OPERATOR_NAMESPACE]],
      ['get', 'configmaps/sandbox-operator-admission', ['-n', namespace]],
      // Only the release's own admission parameters, and only read.
      ['get', 'configmaps/other-admission', ['-n', OPERATOR_NAMESPACE]],
      ['update', 'configmaps/sandbox-operator-admission', ['-n', OPERATOR_NAMESPACE]],
    ];
    for (const [verb, resource, flags] of refused)
      expect(await canI(RESTRICTED_USER, verb, resource, ...flags), `${verb} ${resource}`).toBe(false);
  });

  it('gives the shell reaper’s ServiceAccount its rules in its own namespace only', async () => {
    const reaper = `system:serviceaccount:${namespace}:sandbox-shell-reaper`;
    await kubectlOk(['get', 'serviceaccount', 'sandbox-shell-reaper', '-n', namespace]);
    expect(
      await canI(
        reaper,
        'patch',
        'sessionreferences.sandbox.agents.dev',
        '--subresource=status',
        '-n',
        namespace,
      ),
    ).toBe(true);
    expect(await canI(reaper, 'watch', 'sessionreferences.sandbox.agents.dev', '-n', namespace)).toBe(true);
    expect(await canI(reaper, 'create', 'events', '-n', namespace)).toBe(true);
    expect(await canI(reaper, 'update', 'sessionreferences.sandbox.agents.dev', '-n', namespace)).toBe(false);
    expect(await canI(reaper, 'list', 'sessionreferences.sandbox.agents.dev', '-n', 'default')).toBe(false);
    expect(await canI(reaper, 'list', 'pods', '-n', namespace)).toBe(false);
  });
});

describe('the operator under the chart’s RBAC', () => {
  it('completes a deletion: blocked by a foreign session, then destroyed once it is forgotten', async () => {
    operator = startOperator(namespace);
    const manifest = sandboxManifest(namespace, 'charted', { worktree: 'wt-1', shellReaper: true });
    await kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(manifest) });
    await untilSandbox(
      namespace,
      'charted',
      'sandbox running',
      (sandbox) => sandbox.status?.phase === 'Running',
    );
    const [pod] = (await core().listNamespacedPod({ namespace })).items;
    expect(pod?.spec?.serviceAccountName).toBe('sandbox-shell-reaper');
    await createReference(namespace, 'foreign', {
      sandbox: 'charted',
      session: 'workspace_9',
      worktree: 'wt-2',
    });
    await untilSandbox(
      namespace,
      'charted',
      'reference counted',
      (sandbox) => sandbox.status?.references?.foreign === 1,
    );
    await deleteSandbox(namespace, 'charted');
    const blocked = await untilSandbox(
      namespace,
      'charted',
      'deletion blocked',
      (sandbox) => sandbox.status?.phase === 'Blocked',
    );
    expect(blocked.status?.decision).toMatchObject({ verdict: 'Foreign', blockingReferences: ['foreign'] });
    await deleteReference(namespace, 'foreign');
    await sandboxGone(namespace, 'charted');
    expect((await core().listNamespacedPod({ namespace })).items).toEqual([]);
  });

  it('is refused a request outside its rules, with the API server’s reason', async () => {
    const secrets = await kubectl(['get', 'secrets', '-A'], { restricted: true });
    expect(secrets.exitCode).not.toBe(0);
    expect(secrets.stderr).toContain(`User "${RESTRICTED_USER}" cannot list resource "secrets"`);
    const namespaceDelete = await kubectl(['delete', 'namespace', namespace, '--wait=false'], {
      restricted: true,
    });
    expect(namespaceDelete.exitCode).not.toBe(0);
    expect(namespaceDelete.stderr).toContain('cannot delete resource "namespaces"');
    const create = await kubectl(['create', '-f', '-'], {
      restricted: true,
      input: JSON.stringify(sandboxManifest(namespace, 'not-mine')),
    });
    // RBAC grants the create for warm pools (docs/warm-pools.md); admission refuses any other Sandbox.
    expect(create.exitCode).not.toBe(0);
    expect(create.stderr).toContain('the operator creates only a warm pool’s or a sandbox claim’s Sandboxes');
  });
});
