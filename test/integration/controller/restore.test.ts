/**
 * A namespace restored from a backup converges (issue 27, "Backup and restore"). Velero, the most used
 * backup tool, restores objects without status, finalizers or owner references, and pods before custom
 * resources: the sandbox's pod `<sandbox>-0` comes back first, labelled but owned by nothing and unguarded,
 * then the SessionReferences, then the Sandbox. Against a running operator: the Sandbox gets its finalizer
 * and eviction guard, its index is rebuilt from the references (a foreign one blocks its deletion), and the
 * restored pod, which holds the operator's pod name, is replaced by a pod the Sandbox owns and guards —
 * never left unguarded, never silently counted as the sandbox's.
 */
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { kwokNodeName } from '@sandbox-operator/local-cluster';
import { EXCLUSIVITY_FINALIZER, LABELS } from '../../../operator/api/names.ts';
import { testNamespace } from '../../harness/kube.ts';
import { createReference, createSandbox, deleteSandbox, getSandbox, untilSandbox } from './fixtures.ts';
import {
  core,
  eventually,
  grantOperatorRbac,
  pending,
  startOperator,
  type RunningOperator,
} from './operator.ts';

const local = inject('clusterKind') === 'local';
const namespace = testNamespace('restore');
let operator: RunningOperator;
let restoredUid = '';

const sandboxPods = async () =>
  (await core().listNamespacedPod({ namespace, labelSelector: `${LABELS.sandbox}=restored` })).items;

beforeAll(async () => {
  await grantOperatorRbac();
  operator = startOperator(namespace);
  // The pod as Velero restores it: the operator's name and label, no owner, no finalizer, no status.
  const restored = await core().createNamespacedPod({
    namespace,
    body: {
      metadata: { name: 'restored-0', labels: { [LABELS.sandbox]: 'restored', [LABELS.podIndex]: '0' } },
      spec: {
        ...(local ? { nodeName: kwokNodeName(0) } : {}),
        containers: [
          { name: 'agent', image: local ? 'registry.example/agent:1' : 'registry.k8s.io/pause:3.10' },
        ],
      },
    },
  });
  restoredUid = restored.metadata?.uid ?? '';
  await createReference(namespace, 'own', { sandbox: 'restored', session: 'workspace_1', worktree: 'wt-1' });
  await createReference(namespace, 'foreign', {
    sandbox: 'restored',
    session: 'workspace_2',
    worktree: 'wt-2',
  });
  await createSandbox(namespace, 'restored', { worktree: 'wt-1' });
});
afterAll(async () => {
  await operator.stop();
});

describe('a restored namespace', () => {
  it('gets its finalizer, its index rebuilt from the references, and a pod it owns and guards', async () => {
    await untilSandbox(
      namespace,
      'restored',
      'Running with its index',
      (sandbox) => sandbox.status?.phase === 'Running' && sandbox.status.references?.attached === 2,
    );
    const sandbox = await getSandbox(namespace, 'restored');
    expect(sandbox?.metadata.finalizers).toContain(EXCLUSIVITY_FINALIZER);
    expect(sandbox?.status?.references).toMatchObject({ attached: 2, foreign: 1 });
    const pods = await sandboxPods();
    expect(pods).toHaveLength(1);
    const [pod] = pods;
    expect(pod?.metadata?.uid).not.toBe(restoredUid); // replaced, not counted as the sandbox's
    expect(pod?.metadata?.finalizers).toContain(EXCLUSIVITY_FINALIZER);
    expect(pod?.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'Sandbox',
      name: 'restored',
      uid: sandbox?.metadata.uid,
      controller: true,
    });
  });

  it('said what it replaced', async () => {
    const events = await eventually('the UnownedPodReplaced Event', async () => {
      const list = await core().listNamespacedEvent({
        namespace,
        fieldSelector: 'involvedObject.name=restored,reason=UnownedPodReplaced',
      });
      return list.items.length > 0 ? list.items : pending({ events: 0 });
    });
    expect(events[0]?.message).toContain('restored-0');
  });

  it('keeps a shared sandbox: its deletion is blocked by the restored foreign reference', async () => {
    await deleteSandbox(namespace, 'restored');
    await untilSandbox(namespace, 'restored', 'Blocked', (sandbox) => sandbox.status?.phase === 'Blocked');
    expect((await sandboxPods()).every((pod) => pod.metadata?.deletionTimestamp === undefined)).toBe(true);
  });
});
