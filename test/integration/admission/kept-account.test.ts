/**
 * A ServiceAccount the template keeps is narrowed as the reaper's own is (issue 26, #4). The operator keeps a
 * template's account (operator/sidecar/injection/apply.ts), so the sidecar's token is that account's and the
 * reaper's rights are bound to it; the same account's token is mounted into the agent containers. Selected by
 * the account's name only, an agent in sandbox X's pod could write status.endedTurns on sandbox Y's reference
 * and make Y's reaper end another session's shells. Against the real API server, with real tokens bound to
 * real pods (the API server adds the pod's name to the user's extra), and the chart's own policies and rules.
 */
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type KubeConfig,
  type V1PolicyRule,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  API_VERSION,
  GROUP,
  SESSION_REFERENCE,
  SHELL_REAPER_ACCOUNT,
  VERSION,
} from '../../../operator/api/names.ts';
import { eventually, pending } from '../../harness/eventually.ts';
import { accountTokenKubeConfig, kubeConfig, kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';
import { template, type Manifest } from '../chart/helm.ts';
import { createReference } from '../controller/fixtures.ts';

const namespace = testNamespace('kept-account');
const release = `ka${Math.random().toString(16).slice(2, 8)}`;
/** The account a template keeps (workload identity), bound to the reaper's rules as docs/sidecar.md says. */
const KEPT = 'agent-identity';
/** An agent host running in a pod of its own, with the rights docs/client.md lists. */
const HOST = 'agent-host';
const HOST_RULES: V1PolicyRule[] = [
  { apiGroups: [GROUP], resources: [SESSION_REFERENCE.plural], verbs: ['create', 'patch', 'delete', 'list'] },
  { apiGroups: [GROUP], resources: [`${SESSION_REFERENCE.plural}/status`], verbs: ['patch'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create'] },
];
let applied: readonly Manifest[] = [];
let sandboxX: KubeConfig;
let unbound: KubeConfig;
let host: KubeConfig;
let reaperWithHostRights: KubeConfig;
let controller: KubeConfig;

async function account(name: string, rules: V1PolicyRule[]) {
  const rbac = kubeConfig().makeApiClient(RbacAuthorizationV1Api);
  await kubeConfig()
    .makeApiClient(CoreV1Api)
    .createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    },
  });
}

/** A pod running as `serviceAccountName` (never scheduled: a token bound to it needs only the object). */
async function pod(name: string, serviceAccountName: string) {
  const created = await kubeConfig()
    .makeApiClient(CoreV1Api)
    .createNamespacedPod({
      namespace,
      body: {
        metadata: { name },
        spec: { serviceAccountName, containers: [{ name: 'agent', image: 'registry.invalid/agent:1' }] },
      },
    });
  return { name, uid: created.metadata?.uid ?? '' };
}

/** A subagent's reference of `sandbox`, named as its session. */
const reference = (name: string, sandbox: string) =>
  createReference(namespace, name, { sandbox, session: name, role: 'Subagent', parentSession: 'p' });

/** 'allowed', or the API server's message. */
const outcome = (write: Promise<unknown>) =>
  write.then(
    () => 'allowed',
    (error: unknown) => String((error as { body?: unknown }).body ?? error),
  );

const patchStatus = (kc: KubeConfig, name: string, status: object) =>
  outcome(
    kc.makeApiClient(CustomObjectsApi).patchNamespacedCustomObjectStatus(
      {
        group: GROUP,
        version: VERSION,
        plural: SESSION_REFERENCE.plural,
        namespace,
        name,
        body: { status },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    ),
  );

const event = (kc: KubeConfig, involved: { kind: string; apiVersion: string }, instance: string) =>
  outcome(
    kc.makeApiClient(CoreV1Api).createNamespacedEvent({
      namespace,
      body: {
        metadata: { generateName: 'kept-', namespace },
        involvedObject: { ...involved, name: 'ref-x', namespace },
        reason: 'ShellsRetired',
        message: 'test',
        type: 'Normal',
        reportingComponent: `${GROUP}/shell-reaper`,
        reportingInstance: instance,
      },
    }),
  );

const ended = (turn: string) => ({ endedTurns: [{ id: turn, phase: 'Completed' }] });
const shells = (turn: string) => ({ shells: { retiredTurn: turn, retiredGroups: 1, unreachable: 0 } });
const reaperRules = (objects: readonly Manifest[]) =>
  (
    objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === `${release}-shell-reaper`) as
      { rules: V1PolicyRule[] } | undefined
  )?.rules ?? [];

describe('a ServiceAccount a template keeps', { timeout: 180_000 }, () => {
  beforeAll(async () => {
    const rendered = await template({}, { release });
    // Bindings scoped to this namespace: no other test's accounts meet these policies.
    const scope = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } } };
    applied = rendered.objects
      .filter(
        (o) => o.kind.startsWith('ValidatingAdmissionPolicy') && o.metadata.name.includes('-shell-reaper-'),
      )
      .map((o) =>
        o.kind === 'ValidatingAdmissionPolicyBinding'
          ? { ...o, spec: { ...(o['spec'] as object), matchResources: scope } }
          : o,
      );
    expect(applied).toHaveLength(4);
    await kubectlOk(['apply', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: applied }),
    });
    await account(KEPT, reaperRules(rendered.objects));
    await account(HOST, HOST_RULES);
    // The reaper's own account, even if someone grants it the host's rights too.
    await account(SHELL_REAPER_ACCOUNT, [...reaperRules(rendered.objects), ...HOST_RULES]);
    // Any other workload that records Events (every controller does).
    await account('controller', [{ apiGroups: [''], resources: ['events'], verbs: ['create'] }]);
    sandboxX = await accountTokenKubeConfig(namespace, KEPT, await pod('sbx-x-0', KEPT));
    host = await accountTokenKubeConfig(namespace, HOST, await pod('host-0', HOST));
    unbound = await accountTokenKubeConfig(namespace, KEPT);
    const reaperPod = await pod('sbx-x-1', SHELL_REAPER_ACCOUNT);
    reaperWithHostRights = await accountTokenKubeConfig(namespace, SHELL_REAPER_ACCOUNT, reaperPod);
    controller = await accountTokenKubeConfig(
      namespace,
      'controller',
      await pod('controller-0', 'controller'),
    );
    await reference('ref-x', 'sbx-x');
    await reference('ref-y', 'sbx-y');
  });
  afterAll(async () => {
    for (const object of applied) {
      await kubectl(['delete', `${object.kind}/${object.metadata.name}`, '--ignore-not-found']);
    }
  });

  it('may not end a turn on another sandbox’s reference, from that sandbox’s pod', async () => {
    // The policies take effect once the API server has loaded them.
    const other = await eventually(
      'the kept account’s write to sandbox sbx-y to be refused',
      async () => {
        const result = await patchStatus(sandboxX, 'ref-y', ended('t1'));
        return result === 'allowed' ? pending(result) : result;
      },
      20_000,
    );
    expect(other).toMatch(/may write only status.shells/);
    expect(await patchStatus(sandboxX, 'ref-y', shells('t1'))).toMatch(
      /agent-identity, of pod sbx-x-0\) may write only the status of its own sandbox's references, not of sandbox sbx-y/,
    );
    expect(await patchStatus(sandboxX, 'ref-x', ended('t1'))).toMatch(/may write only status.shells/);
    expect(await patchStatus(unbound, 'ref-x', shells('t1'))).toMatch(/token is bound to no pod/);
    expect(await patchStatus(sandboxX, 'ref-x', shells('t1'))).toBe('allowed');
    // The reaper's own account is narrowed by its name, whatever else it is granted.
    expect(await patchStatus(reaperWithHostRights, 'ref-y', ended('t1'))).toMatch(
      /sandbox-shell-reaper, of pod sbx-x-1\) may write only status.shells/,
    );
  });

  it('records Events only about references, and only as its own pod', async () => {
    const reference = { kind: SESSION_REFERENCE.kind, apiVersion: API_VERSION };
    expect(await event(sandboxX, { kind: 'Sandbox', apiVersion: API_VERSION }, 'sbx-x-0')).toMatch(
      /may record Events only about SessionReferences/,
    );
    expect(await event(sandboxX, reference, 'sbx-y-0')).toMatch(/only as itself \(reportingInstance\)/);
    expect(await event(sandboxX, reference, 'sbx-x-0')).toBe('allowed');
  });

  it('leaves the agent host, in a pod of its own, writing every reference’s turns, and other accounts’ Events', async () => {
    expect(await patchStatus(host, 'ref-y', ended('t2'))).toBe('allowed');
    expect(
      await patchStatus(host, 'ref-x', { turn: { id: 't3', phase: 'Running', origin: 'Unknown' } }),
    ).toBe('allowed');
    expect(await event(host, { kind: 'Pod', apiVersion: 'v1' }, 'host-0')).toBe('allowed');
    // A service account without the reaper's rights records any Event, as before.
    expect(await event(controller, { kind: 'Pod', apiVersion: 'v1' }, 'elsewhere')).toBe('allowed');
    // And the admin (a user, no pod) as before.
    await kubectlOk([
      '-n',
      namespace,
      'patch',
      `${SESSION_REFERENCE.plural}.${GROUP}`,
      'ref-y',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: ended('t4') }),
    ]);
  });
});
