/**
 * The eviction guard (maxUnavailable 0) is computed against the Sandbox's /scale: the disruption controller
 * expects `spec.replicas` pods. Lowering spec.replicas left the pods beyond it running and made the guard
 * allow as many evictions as there were pods too many — a drain could then stop a shared sandbox's pod.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { GROUP, LABELS, SANDBOX, VERSION } from '../../../operator/api/names.ts';
import { testNamespace } from '../../harness/kube.ts';
import { createReference, createSandbox, untilSandbox } from './fixtures.ts';
import {
  core,
  customObjects,
  eventually,
  grantOperatorRbac,
  pending,
  startOperator,
  type RunningOperator,
} from './operator.ts';

const namespace = testNamespace('guard-scale');
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
let operator: RunningOperator;

beforeAll(async () => {
  await grantOperatorRbac();
  operator = startOperator(namespace);
  await createSandbox(namespace, 'pair', { worktree: 'wt-1', replicas: 2 });
  await createReference(namespace, 'foreign', { sandbox: 'pair', session: 'workspace_7', worktree: 'wt-2' });
  await untilSandbox(namespace, 'pair', 'two pods ready', (s) => s.status?.ready === '2/2');
});
afterAll(async () => {
  await operator.stop();
});

const pods = async () =>
  (await core().listNamespacedPod({ namespace, labelSelector: `${LABELS.sandbox}=pair` })).items;

const evict = (name: string) =>
  core()
    .createNamespacedPodEviction({ name, namespace, body: { metadata: { name, namespace } } })
    .then(
      () => 'evicted',
      (error: unknown) => (error as { code?: number }).code,
    );

/** A merge patch of the Sandbox's spec.replicas, through the resource or its /scale; the refusal's text. */
async function lower(via: 'spec' | 'scale'): Promise<string> {
  const target = { group: GROUP, version: VERSION, namespace, plural: SANDBOX.plural, name: 'pair' };
  const write =
    via === 'spec'
      ? customObjects().patchNamespacedCustomObject({ ...target, body: { spec: { replicas: 1 } } }, MERGE)
      : customObjects().patchNamespacedCustomObjectScale(
          { ...target, body: { spec: { replicas: 1 } } },
          MERGE,
        );
  return write.then(
    () => 'lowered',
    (error: unknown) => String((error as { body?: unknown }).body ?? error),
  );
}

describe('a shared sandbox of two pods', () => {
  it('refuses a lower spec.replicas, through its spec and through /scale, naming the field', async () => {
    for (const via of ['spec', 'scale'] as const) {
      const refusal = await lower(via);
      expect(refusal, via).toContain('spec.replicas');
      expect(refusal, via).toContain('may not decrease');
    }
  });

  it('keeps refusing every eviction of its pods, however the disruption controller recomputes', async () => {
    // Any change of a pod makes the disruption controller compute the guard again against /scale.
    for (const pod of await pods())
      await core().patchNamespacedPod(
        {
          name: pod.metadata?.name ?? '',
          namespace,
          body: { metadata: { annotations: { touched: 'yes' } } },
        },
        MERGE,
      );
    const status = await eventually('the guard computed against two pods', async () => {
      const guard = await budget();
      return guard.status?.expectedPods === 2 && guard.status.currentHealthy === 2
        ? guard.status
        : pending({ status: guard.status });
    });
    expect(status.disruptionsAllowed).toBe(0);
    for (const pod of await pods()) expect(await evict(pod.metadata?.name ?? '')).toBe(429);
    expect((await pods()).filter((p) => p.metadata?.deletionTimestamp !== undefined)).toEqual([]);
  });
});

async function budget() {
  const { PolicyV1Api } = await import('@kubernetes/client-node');
  const { kubeConfig } = await import('../../harness/kube.ts');
  return kubeConfig()
    .makeApiClient(PolicyV1Api)
    .readNamespacedPodDisruptionBudget({ name: 'pair-sandbox', namespace });
}
