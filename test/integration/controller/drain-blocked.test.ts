/**
 * A node drain held up by a sandbox's eviction guard is visible (issue 27, "Block made visible"): when the
 * node running a sandbox pod is cordoned, or tainted by the autoscaler removing it, the Sandbox says so in its
 * DisruptionBlocked condition (naming the node, what drains it and the pod) and one Warning Event; the
 * eviction is still refused; when the drain is called off the condition turns False. The test makes its own
 * kwok node, so cordoning it disturbs no other test's pods.
 */
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { ADMISSION_PARAMS } from '../../../operator/api/admission.ts';
import { GROUP, LABELS, SANDBOX, VERSION } from '../../../operator/api/names.ts';
import { kubectl, testNamespace } from '../../harness/kube.ts';
import { getSandbox, sandboxManifest, untilSandbox } from './fixtures.ts';
import {
  core,
  customObjects,
  eventually,
  grantOperatorRbac,
  OPERATOR_NAMESPACE,
  pending,
  startOperator,
  type RunningOperator,
} from './operator.ts';

const local = inject('clusterKind') === 'local';
const namespace = testNamespace('drain-blocked');
const node = `drain-blocked-${process.pid}`;
let operator: RunningOperator | undefined;

const disruption = async () =>
  (await getSandbox(namespace, 'held'))?.status?.conditions?.find((c) => c.type === 'DisruptionBlocked');

/** The admission parameters' nodes a template may name (tools/local-cluster/crds.ts lists the kwok nodes). */
async function setTemplateNodes(nodes: string): Promise<void> {
  await core().patchNamespacedConfigMap(
    {
      name: ADMISSION_PARAMS,
      namespace: OPERATOR_NAMESPACE,
      body: { data: { podTemplateNodeNames: nodes } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}
let templateNodes = '';

beforeAll(async () => {
  if (!local) return;
  const params = await core().readNamespacedConfigMap({
    name: ADMISSION_PARAMS,
    namespace: OPERATOR_NAMESPACE,
  });
  templateNodes = params.data?.['podTemplateNodeNames'] ?? '';
  await setTemplateNodes([templateNodes, node].filter(Boolean).join(','));
  await core().createNode({
    body: {
      metadata: { name: node, labels: { 'kubernetes.io/hostname': node, type: 'kwok' } },
      spec: { taints: [{ key: 'kwok.x-k8s.io/node', value: 'fake', effect: 'NoSchedule' }] },
    },
  });
  await grantOperatorRbac();
  operator = startOperator(namespace);
  const manifest = sandboxManifest(namespace, 'held', { worktree: 'wt-1', onNode: false });
  const body = {
    ...manifest,
    spec: { ...manifest.spec, podTemplate: { spec: { ...manifest.spec.podTemplate.spec, nodeName: node } } },
  };
  // The policies read their parameters through an informer: the node is allowed once the create goes through.
  await eventually('the template may name the test’s node', () =>
    customObjects()
      .createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: SANDBOX.plural,
        body,
      })
      .then(
        () => true,
        (error: unknown) => pending({ refused: String((error as { body?: unknown }).body ?? error) }),
      ),
  );
  await untilSandbox(namespace, 'held', 'pod running', (sandbox) => sandbox.status?.phase === 'Running');
});
afterAll(async () => {
  await operator?.stop();
  if (!local) return;
  await setTemplateNodes(templateNodes);
  await kubectl(['delete', 'node', node, '--wait=false']);
});

describe.skipIf(!local)('a sandbox on a node being drained', () => {
  it('has DisruptionBlocked False while its node is not drained', async () => {
    expect(await disruption()).toMatchObject({ status: 'False', reason: 'NoDrain' });
  });

  it('says the drain it holds up once its node is cordoned, and still refuses the eviction', async () => {
    expect((await kubectl(['cordon', node])).exitCode).toBe(0);
    const condition = await eventually('DisruptionBlocked True', async () => {
      const seen = await disruption();
      return seen?.status === 'True' ? seen : pending({ condition: seen });
    });
    expect(condition).toMatchObject({ reason: 'NodeDraining' });
    expect(condition.message).toContain(`node ${node} (Cordoned) being drained`);
    expect(condition.message).toContain('pod held-0');
    const events = await eventually('the DrainBlocked Event', async () => {
      const list = await core().listNamespacedEvent({
        namespace,
        fieldSelector: 'involvedObject.name=held,reason=DrainBlocked',
      });
      return list.items.length > 0 ? list.items : pending({ events: 0 });
    });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'Warning', message: condition.message });

    const pod = (await core().listNamespacedPod({ namespace, labelSelector: `${LABELS.sandbox}=held` }))
      .items[0];
    const name = pod?.metadata?.name ?? '';
    const eviction = await core()
      .createNamespacedPodEviction({ name, namespace, body: { metadata: { name, namespace } } })
      .then(
        () => 'evicted',
        (error: unknown) => (error as { code?: number }).code,
      );
    expect(eviction).toBe(429);
  });

  it('turns DisruptionBlocked False once the drain is called off', async () => {
    expect((await kubectl(['uncordon', node])).exitCode).toBe(0);
    await eventually('DisruptionBlocked False', async () => {
      const seen = await disruption();
      return seen?.status === 'False' ? true : pending({ condition: seen });
    });
    const events = await core().listNamespacedEvent({
      namespace,
      fieldSelector: 'involvedObject.name=held,reason=DrainBlocked',
    });
    expect(events.items).toHaveLength(1); // said once, when the drain began
  });

  it('names an autoscaler that removes the node by its taint', async () => {
    const taint = (op: string) =>
      kubectl(['taint', 'nodes', node, `ToBeDeletedByClusterAutoscaler=1700000000:NoSchedule${op}`]);
    expect((await taint('')).exitCode).toBe(0);
    const condition = await eventually('DisruptionBlocked True by the autoscaler', async () => {
      const seen = await disruption();
      return seen?.status === 'True' ? seen : pending({ condition: seen });
    });
    expect(condition.message).toContain(`node ${node} (ClusterAutoscaler) being drained`);
    expect((await taint('-')).exitCode).toBe(0);
  });
});
