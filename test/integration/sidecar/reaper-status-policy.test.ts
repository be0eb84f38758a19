/**
 * The shell reaper's account may write only what it owns (issue 12): RBAC lets it patch any
 * SessionReference's status in the namespace; the chart's admission policy narrows that to status.shells
 * of its own sandbox's references. The policy is rendered from the chart and enforced by the real API
 * server; requests impersonate the account with the pod binding a real projected token carries.
 */
import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, GROUP, SESSION_REFERENCE } from '../../../operator/api/names.ts';
import { kubeConfig, kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';
import { template } from '../chart/helm.ts';
import { createReference } from '../controller/fixtures.ts';
import { waitFor } from '../../process/sidecar/fixtures/process-fixtures.ts';
import { pending } from '../../harness/eventually.ts';

const namespace = testNamespace('reaper-policy');
const ACCOUNT = 'sandbox-shell-reaper';
const release = `rp${Math.random().toString(16).slice(2, 8)}`;
let policyFile = '';

/** A subagent's reference of `sandbox`, named as its session. */
const subagentReference = (name: string, sandbox: string) =>
  createReference(namespace, name, { sandbox, session: name, role: 'Subagent', parentSession: 'p' });

/** A status patch as the reaper of `pod` (or of no pod). */
function patchAs(pod: string | undefined, name: string, status: object) {
  return kubectl([
    '-n',
    namespace,
    `--as=system:serviceaccount:${namespace}:${ACCOUNT}`,
    ...(pod === undefined ? [] : [`--as-user-extra=authentication.kubernetes.io/pod-name=${pod}`]),
    'patch',
    `${SESSION_REFERENCE.plural}.${GROUP}`,
    name,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({ status }),
  ]);
}

/** An Event created as the reaper of `pod`, about `involved`, reported as `instance`. */
function eventAs(pod: string, involved: { kind: string; apiVersion: string }, instance: string) {
  const event = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { generateName: 'reaper-', namespace },
    involvedObject: { ...involved, name: 'own', namespace },
    reason: 'ShellsRetired',
    message: 'test',
    type: 'Normal',
    reportingComponent: `${GROUP}/shell-reaper`,
    reportingInstance: instance,
  };
  return kubectl(
    [
      '-n',
      namespace,
      `--as=system:serviceaccount:${namespace}:${ACCOUNT}`,
      `--as-user-extra=authentication.kubernetes.io/pod-name=${pod}`,
      'create',
      '-f',
      '-',
    ],
    { input: JSON.stringify(event) },
  );
}

const shells = (turn: string) => ({ shells: { retiredTurn: turn, retiredGroups: 1, unreachable: 0 } });

describe('the shell reaper status policy', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    const rendered = await template({}, { release });
    const mine = rendered.objects.filter(
      (o) => o.kind.startsWith('ValidatingAdmissionPolicy') && o.metadata.name.includes('shell-reaper-'),
    );
    expect(mine.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      `ValidatingAdmissionPolicy/${release}-shell-reaper-events.sandbox.agents.dev`,
      `ValidatingAdmissionPolicy/${release}-shell-reaper-status.sandbox.agents.dev`,
      `ValidatingAdmissionPolicyBinding/${release}-shell-reaper-events.sandbox.agents.dev`,
      `ValidatingAdmissionPolicyBinding/${release}-shell-reaper-status.sandbox.agents.dev`,
    ]);
    const dir = await mkdtemp(join(tmpdir(), 'reaper-policy-'));
    policyFile = join(dir, 'policy.yaml');
    await writeFile(policyFile, mine.map((o) => stringify(o)).join('---\n'));
    await kubectlOk(['apply', '-f', policyFile]);
    const rbac = kubeConfig().makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace,
      body: {
        metadata: { name: ACCOUNT },
        rules: [
          { apiGroups: [GROUP], resources: [`${SESSION_REFERENCE.plural}/status`], verbs: ['patch', 'get'] },
          { apiGroups: [''], resources: ['events'], verbs: ['create'] },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: ACCOUNT },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: ACCOUNT },
        subjects: [{ kind: 'ServiceAccount', name: ACCOUNT, namespace }],
      },
    });
    await subagentReference('own', 'sbx-a');
    await subagentReference('other', 'sbx-b');
  });
  afterAll(async () => {
    if (policyFile !== '') await kubectl(['delete', '-f', policyFile, '--ignore-not-found']);
  });

  it('refuses another sandbox’s reference, a host-owned field and a token bound to no pod; allows its own status.shells', async () => {
    // The policy takes effect once the API server has loaded it.
    const other = await waitFor('the policy to refuse another sandbox', async () => {
      const result = await patchAs('sbx-a-0', 'other', shells('t1'));
      return result.exitCode !== 0 ? result.stderr : pending({ allowed: result.stdout });
    });
    expect(other).toMatch(/may write only the status of its own sandbox's references, not of sandbox sbx-b/);
    const turn = await patchAs('sbx-a-0', 'own', {
      turn: { id: 't9', phase: 'Completed', origin: 'Unknown' },
    });
    expect(turn.stderr).toMatch(/may write only status.shells/);
    const unbound = await patchAs(undefined, 'own', shells('t1'));
    expect(unbound.stderr).toMatch(/token is bound to no pod/);
    // A sandbox whose name is a prefix of another's is still another sandbox.
    expect((await patchAs('sbx-a-extra-0', 'own', shells('t1'))).exitCode).not.toBe(0);
    const own = await patchAs('sbx-a-0', 'own', shells('t1'));
    expect([own.exitCode, own.stderr]).toEqual([0, '']);
  });

  it('lets it record Events only about SessionReferences, and only as its own pod', async () => {
    const reference = { kind: SESSION_REFERENCE.kind, apiVersion: API_VERSION };
    const forged = await waitFor('the policy to refuse an Event about a Sandbox', async () => {
      const result = await eventAs('sbx-a-0', { kind: 'Sandbox', apiVersion: API_VERSION }, 'sbx-a-0');
      return result.exitCode !== 0 ? result.stderr : pending({ allowed: result.stdout });
    });
    expect(forged).toMatch(/may record Events only about SessionReferences/);
    const pod = await eventAs('sbx-a-0', { kind: 'Pod', apiVersion: 'v1' }, 'sbx-a-0');
    expect(pod.stderr).toMatch(/only about SessionReferences/);
    const impostor = await eventAs('sbx-a-0', reference, 'sbx-b-0');
    expect(impostor.stderr).toMatch(/may record Events only as itself \(reportingInstance\), not as sbx-b-0/);
    const own = await eventAs('sbx-a-0', reference, 'sbx-a-0');
    expect([own.exitCode, own.stderr]).toEqual([0, '']);
  });
});
