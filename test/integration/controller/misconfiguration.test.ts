/**
 * A misconfiguration met for real: the operator runs as a ServiceAccount the chart's RBAC covers but the
 * pod-protection policy does not trust, so the API server refuses its pod create (HTTP 403). The operator
 * says so once, with the fix for its identity, records `Misconfigured` and one Event, and does not retry
 * with backoff: a later change of the sandbox is looked at, not said again.
 */
import { KubeConfig, PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions } from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, SANDBOX, VERSION } from '../../../operator/api/names.ts';
import type { ControllerPorts } from '../../../operator/controller/ports.ts';
import { argoCdHealthOf, kstatusOf } from '../../harness/health-checks.ts';
import { kubeConfig, serviceAccountKubeConfig, testNamespace } from '../../harness/kube.ts';
import { createSandbox, getSandbox } from './fixtures.ts';
import {
  core,
  customObjects,
  eventually,
  grantOperatorRbac,
  pending,
  startOperator,
  type RunningOperator,
} from './operator.ts';

const namespace = testNamespace('misconfigured');
const account = 'wrong-identity';
const user = `system:serviceaccount:${namespace}:${account}`;
const namespaceReader = `${namespace}-namespace-reader`;
type Line = { level: number; msg: string; key?: string; reason?: string; fix?: string };
const lines: Line[] = [];
let operator: RunningOperator;
let touchedRefused: () => void = () => undefined;
/** Settles once the pod create of the touched template was refused and the runner has handled it. */
const touchedRefusal = new Promise<void>((resolve) => (touchedRefused = resolve));

/** Sees the operator's pod creates: the refusal of one built from the touched template is the barrier. */
const watchingCreates = (ports: ControllerPorts): ControllerPorts => ({
  ...ports,
  pods: {
    ...ports.pods,
    create: async (pod) => {
      try {
        return await ports.pods.create(pod);
      } catch (error) {
        // The runner handles the refusal in the microtasks that follow; setImmediate runs after them.
        if (pod.metadata?.labels?.['touched'] === 'yes') setImmediate(touchedRefused);
        throw error;
      }
    },
  },
});

/** A kubeconfig for the API server as `account`, with a token from the TokenRequest API. */
async function accountKubeConfig(): Promise<KubeConfig> {
  const kc = await serviceAccountKubeConfig(namespace, account);
  await kubeConfig()
    .makeApiClient(RbacAuthorizationV1Api)
    .createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: account },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: 'sandbox-operator-operator',
        },
        subjects: [{ kind: 'ServiceAccount', name: account, namespace }],
      },
    });
  // As the chart does for a scoped operator: a RoleBinding cannot grant reading its (cluster-scoped)
  // Namespace, whose PodSecurity label picks the shell reaper's mode, nor watching Nodes; a ClusterRole does.
  const rbac = kubeConfig().makeApiClient(RbacAuthorizationV1Api);
  await rbac.createClusterRole({
    body: {
      metadata: { name: namespaceReader },
      rules: [
        {
          apiGroups: [''],
          resources: ['namespaces'],
          resourceNames: [namespace],
          verbs: ['get', 'list', 'watch'],
        },
        // And, as the chart does, the nodes being drained (cluster-scoped too).
        { apiGroups: [''], resources: ['nodes'], verbs: ['list', 'watch'] },
      ],
    },
  });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: namespaceReader },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: namespaceReader },
      subjects: [{ kind: 'ServiceAccount', name: account, namespace }],
    },
  });
  // As the chart does: the API server's addresses, which each sandbox's NetworkPolicy opens to its pods.
  await rbac.createNamespacedRoleBinding({
    namespace: 'default',
    body: {
      metadata: { name: namespaceReader },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name: 'sandbox-operator-api-server-endpoints',
      },
      subjects: [{ kind: 'ServiceAccount', name: account, namespace }],
    },
  });
  return kc;
}

beforeAll(async () => {
  await grantOperatorRbac(); // the chart's ClusterRole; the policy trusts only the chart's identities
  const log = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line) as Line) });
  operator = startOperator(
    namespace,
    ['--leader-elect', 'false'],
    watchingCreates,
    await accountKubeConfig(),
    log,
  );
});
afterAll(async () => {
  await operator.stop();
  const rbac = kubeConfig().makeApiClient(RbacAuthorizationV1Api);
  await rbac.deleteClusterRoleBinding({ name: namespaceReader });
  await rbac.deleteClusterRole({ name: namespaceReader });
  await rbac.deleteNamespacedRoleBinding({ namespace: 'default', name: namespaceReader });
});

const misconfigured = async () =>
  (await getSandbox(namespace, 'refused'))?.status?.conditions?.find((c) => c.type === 'Misconfigured');

describe('an operator the pod-protection policy does not trust', () => {
  it('says so once with the fix, records Misconfigured and one Event, and does not retry with backoff', async () => {
    await createSandbox(namespace, 'refused', { worktree: 'wt-1' });
    const condition = await eventually('Misconfigured=True', async () => {
      const current = await misconfigured();
      return current?.status === 'True'
        ? current
        : pending({ conditions: (await getSandbox(namespace, 'refused'))?.status?.conditions });
    });
    expect(condition.reason).toBe('AdmissionRefused');
    expect(condition.message).toContain('only the sandbox operator creates pods owned by a Sandbox');
    // The fix names this operator's identity and the policy parameter that would trust it.
    expect(condition.message).toContain(`"${user}"`);
    expect(condition.message).toContain('operatorUsers');

    // A change of the sandbox: looked at again, and refused again, without a word more.
    await customObjects().patchNamespacedCustomObject(
      {
        group: GROUP,
        version: VERSION,
        namespace,
        plural: SANDBOX.plural,
        name: 'refused',
        body: [{ op: 'add', path: '/spec/podTemplate/metadata', value: { labels: { touched: 'yes' } } }],
      },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    await touchedRefusal;

    const ofSandbox = lines.filter((line) => line.key === `${namespace}/refused`);
    const said = ofSandbox.filter((line) => line.level >= 50);
    expect(said.map((line) => line.reason)).toEqual(['AdmissionRefused']);
    expect(said[0]?.fix).toContain(`"${user}"`);
    expect(ofSandbox.filter((line) => line.msg.includes('backoff'))).toEqual([]);
    expect(ofSandbox.filter((line) => line.msg.includes('said before')).length).toBeGreaterThan(0);
    const events = await core().listNamespacedEvent({
      namespace,
      fieldSelector: 'involvedObject.name=refused,reason=AdmissionRefused',
    });
    expect(events.items.map((event) => [event.type, event.count ?? 1])).toEqual([['Warning', 1]]);
    expect((await misconfigured())?.lastTransitionTime).toBe(condition.lastTransitionTime);
  });

  it('reads Stalled, with the refusal and its fix: Failed to kstatus, Degraded to Argo CD', async () => {
    const read = await eventually('the refusal read as a failure', async () => {
      const sandbox = await getSandbox(namespace, 'refused');
      const [kstatus] = await kstatusOf([sandbox]);
      return kstatus?.status === 'Failed' ? { sandbox, kstatus } : pending({ kstatus });
    });
    const stalled = read.sandbox?.status?.conditions?.find((c) => c.type === 'Stalled');
    expect(stalled).toMatchObject({ status: 'True', reason: 'AdmissionRefused' });
    expect(stalled?.message).toBe((await misconfigured())?.message);
    expect(read.kstatus.message).toBe(stalled?.message);
    expect(await argoCdHealthOf('Sandbox', [read.sandbox])).toEqual([
      { status: 'Degraded', message: stalled?.message },
    ]);
  });
});
